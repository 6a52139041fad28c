import { EQUIPMENT } from '../../equipment.js';
import type { Queryable } from '../../db/index.js';
import type { TelemetryKind } from '../kinds.js';
import { HORIZON_SQL } from '../retention/horizon.js';
import { mergeUnits, rawUnits, rollupUnits } from '../rollups/merge-units.js';
import type { UnitSpec } from '../rollups/unit-columns.js';
import { binOf, UNITS } from '../rollups/units.js';
import { zoneAlignment } from './zones.js';
import { SQL_SEPARATOR, summaryLine } from './encode-sql.js';
import type { Format } from '../../export/records.js';

// Summary downloads (contract 6). The range [start, end) is covered by units, each inside one output
// bucket: rollup rows of the coarsest level whose buckets nest in the output buckets (days for UTC,
// hours for whole-hour zones, quarters otherwise) where they are clean, 15-minute rollups at the
// edges and inside stale coarse buckets, and log rows for stale quarters and for the cut edges
// finer than a quarter. The units are merged per equipment and output bucket (units.ts), so the
// answer equals a plain aggregation of the logs whatever the refresher has done so far.

export type Interval = '15m' | '1h' | '1d' | 'all';

export interface SummaryRequest {
  ids: number[];
  /** Epoch ms, [start, end). */
  start: number;
  end: number;
  interval: Interval;
  zone: string;
}

/** Every field name of a kind's summary DTO, in order. */
export const summaryFieldNames = (kind: TelemetryKind) => [
  EQUIPMENT[kind].idField,
  'start',
  'end',
  'count',
  ...FIELD_NAMES[kind],
];

const FIELD_NAMES: Record<TelemetryKind, string[]> = {
  sensor: ['min', 'max', 'avg', 'first', 'last'],
  meter: ['volume', 'lastTotalVolume', 'avgFlowRate', 'maxFlowRate', 'avgPressure'],
  pump: [
    'runningPercent',
    'avgFrequency',
    'avgPressure',
    'maxPressure',
    'lastStatusID',
    'lastStatus',
  ],
  tank: [
    'minEntryTankLevel',
    'maxEntryTankLevel',
    'avgEntryTankLevel',
    'minExitTankLevel',
    'maxExitTankLevel',
    'avgExitTankLevel',
    'lastTotalVolume',
  ],
};

const QUARTER = 15 * 60_000;
const floorTo = (t: number, ms: number) => Math.floor(t / ms) * ms;
const ceilTo = (t: number, ms: number) => Math.ceil(t / ms) * ms;

/** Rollup level (minutes) whose UTC-aligned buckets nest in every output bucket; 0: logs only. */
export function unitLevel(
  interval: Interval,
  zone: string,
  start: number,
  end: number,
): 0 | 15 | 60 | 1440 {
  if (interval === 'all') return 1440;
  const align = zoneAlignment(zone, start, end);
  if (align === 'none') return 0;
  if (interval === '15m') return 15;
  if (interval === '1h') return align === 'quarter' ? 15 : 60;
  return align === 'utc' ? 1440 : align === 'hour' ? 60 : 15;
}

/**
 * The UTC instants that split [start, end) between the sources: logs in [start, s15) and [e15, end),
 * 15-minute rollups in [s15, a) and [b, e15), level rollups in [a, b).
 */
export function splitRange(start: number, end: number, level: number) {
  if (level === 0) return { s15: end, e15: end, a: end, b: end };
  let s15 = ceilTo(start, QUARTER);
  let e15 = floorTo(end, QUARTER);
  if (s15 >= e15) s15 = e15 = end;
  let a = ceilTo(s15, level * 60_000);
  let b = floorTo(e15, level * 60_000);
  if (a >= b) a = b = e15;
  return { s15, e15, a, b };
}

export const BUCKET: Record<Interval, { start: string; end: string }> = {
  '15m': {
    start: `t0 - ((t0 AT TIME ZONE $4) - date_bin('15 minutes', t0 AT TIME ZONE $4, TIMESTAMP '2000-01-01'))`,
    end: `grp + interval '15 minutes'`,
  },
  '1h': {
    start: `t0 - ((t0 AT TIME ZONE $4) - date_trunc('hour', t0 AT TIME ZONE $4))`,
    end: `grp + interval '1 hour'`,
  },
  '1d': {
    start: `date_trunc('day', t0 AT TIME ZONE $4) AT TIME ZONE $4`,
    end: `(date_trunc('day', grp AT TIME ZONE $4) + interval '1 day') AT TIME ZONE $4`,
  },
  all: { start: `$2::timestamptz`, end: `$3::timestamptz` },
};

const WIDTH: Record<Interval, number> = { '15m': 15, '1h': 60, '1d': 1440, all: 0 };

/**
 * When the interval is the level itself (15m from quarters, 1h from hours in a whole-hour zone, 1d
 * from days in UTC), each clean level row in [a, b) is one output bucket by itself: those rows go
 * out as they are, without merging, and only the rest (edges, stale buckets) is merged. Meters merge
 * everything: each bucket's volume links to the unit before it.
 */
export const directLevel = (spec: UnitSpec, interval: Interval, level: number) =>
  !spec.chain && level > 0 && WIDTH[interval] === level;

/** Clean rows of the level in [a, b) ($7, $8). */
export function levelRows(spec: UnitSpec, level: number): string {
  const { rollupTable: t, idColumn: idc, code } = spec;
  const notStale =
    level === 15
      ? `NOT EXISTS (SELECT 1 FROM rollup_dirty d WHERE d.kind = ${code} AND d.equipment_id = r.${idc} AND d.bucket = r.bucket)`
      : `(r.${idc}, r.bucket) NOT IN (SELECT s.id, s.b FROM stale s)`; // hashed once (see summaryUnits)
  return `SELECT ${rollupUnits(spec)} FROM ${t} r WHERE r.${idc} = ANY($1) AND r.level = ${level} AND r.bucket >= $7 AND r.bucket < $8 AND ${notStale}`;
}

/** Level buckets in [a, b) holding a stale quarter (levels above 15). */
const staleCte = (spec: UnitSpec, level: number) =>
  level > 15
    ? `stale AS MATERIALIZED (SELECT DISTINCT d.equipment_id AS id, ${binOf(level, 'd.bucket')} AS b FROM rollup_dirty d
         WHERE d.kind = ${spec.code} AND d.equipment_id = ANY($1) AND d.bucket >= $7 AND d.bucket < $8),`
    : '';

// Parameters: ids, start, end, zone, s15, e15, a, b (times as ISO text). Not every variant uses every
// one; the casts in the final WHERE give each its type.
export const TYPED = `$2::timestamptz IS NOT NULL AND $3::timestamptz IS NOT NULL AND $4::text IS NOT NULL AND $5::timestamptz IS NOT NULL
   AND $6::timestamptz IS NOT NULL AND $7::timestamptz IS NOT NULL AND $8::timestamptz IS NOT NULL`;

/**
 * One row per equipment with summaries: its id and the text of its summaries in bucket order, encoded
 * in `format`. Level rows that are output buckets by themselves (see directLevel) are encoded as they
 * are; everything else is merged per equipment and output bucket first.
 */
function summarySql(
  spec: UnitSpec,
  interval: Interval,
  level: number,
  format: Format,
  direct = directLevel(spec, interval, level),
): string {
  const bucket = BUCKET[interval];
  const group = `CASE WHEN t0 = '-infinity' THEN NULL ELSE ${bucket.start} END`;
  const names = summaryFieldNames(spec.kind);
  const lines = [
    `SELECT id, grp AS s, ${summaryLine(spec.kind, format, names, 'greatest(grp, $2::timestamptz)', `least(${bucket.end}, $3::timestamptz)`)} AS line FROM merged`,
  ];
  if (direct)
    lines.push(
      `SELECT id, t0 AS s, ${summaryLine(spec.kind, format, names, 't0', `t0 + interval '${level} minutes'`)} AS line FROM l`,
    );
  return `WITH ${summaryUnits(spec, level, direct)},
    merged AS (${mergeUnits(spec, 'units', group, 'id', false)}),
    ${direct ? `l AS (${levelRows(spec, level)}),` : ''}
    lines AS (${lines.join('\n  UNION ALL\n  ')})
  SELECT id, string_agg(line, ${SQL_SEPARATOR[format]} ORDER BY s) AS text FROM lines WHERE ${TYPED} GROUP BY id ORDER BY id`;
}

/**
 * The CTEs `stale` (levels above 15) and `units`: every unit covering [start, end) but the clean level
 * rows that go out as they are when `direct` (parameters as summarySql; historian.ts uses it too).
 */
export function summaryUnits(spec: UnitSpec, level: number, direct: boolean): string {
  const { rollupTable: t, idColumn: idc, logTable, code } = spec;
  const clean = (r: string) =>
    `NOT EXISTS (SELECT 1 FROM rollup_dirty d WHERE d.kind = ${code} AND d.equipment_id = ${r}.${idc} AND d.bucket = ${r}.bucket)`;
  const parts: string[] = [];
  if (level > 0 && !direct) parts.push(levelRows(spec, level));
  if (level > 15) {
    // Clean quarters inside stale level buckets: not among the marks of [a, b), a hashed set made once
    // (NOT IN of columns that are never null). As an anti join, planned without statistics, it read
    // every mark of the equipment for every quarter (1,000 late logs over a year: 8 million rows read,
    // seconds, for a daily summary).
    parts.push(
      `SELECT r.* FROM stale s CROSS JOIN LATERAL (
         SELECT ${rollupUnits(spec)} FROM ${t} r WHERE r.${idc} = s.id AND r.level = 15 AND r.bucket >= s.b
            AND r.bucket < s.b + interval '${level} minutes'
            AND (r.${idc}, r.bucket) NOT IN (SELECT d.equipment_id, d.bucket FROM rollup_dirty d
              WHERE d.kind = ${code} AND d.equipment_id = ANY($1) AND d.bucket >= $7 AND d.bucket < $8) OFFSET 0) r`,
    );
  }
  if (level > 0) {
    parts.push(
      // Clean quarters at the edges, [s15, a) and [b, e15).
      `SELECT ${rollupUnits(spec)} FROM ${t} r WHERE r.${idc} = ANY($1) AND r.level = 15 AND r.bucket >= $5 AND r.bucket < $7 AND ${clean('r')}`,
      `SELECT ${rollupUnits(spec)} FROM ${t} r WHERE r.${idc} = ANY($1) AND r.level = 15 AND r.bucket >= $8 AND r.bucket < $6 AND ${clean('r')}`,
      // Logs of stale quarters.
      `SELECT g.* FROM rollup_dirty d CROSS JOIN LATERAL (
         SELECT ${rawUnits(spec)} FROM ${logTable} g WHERE g.${idc} = d.equipment_id
            AND g.ts >= d.bucket AND g.ts < d.bucket + interval '15 minutes' OFFSET 0) g
       WHERE d.kind = ${code} AND d.equipment_id = ANY($1) AND d.bucket >= $5 AND d.bucket < $6`,
    );
  }
  // Logs of the edges finer than a quarter (with level 0: the whole range, since then s15 = e15 = end).
  parts.push(
    `SELECT ${rawUnits(spec)} FROM ${logTable} g WHERE g.${idc} = ANY($1) AND g.ts >= $2 AND g.ts < $5`,
    `SELECT ${rawUnits(spec)} FROM ${logTable} g WHERE g.${idc} = ANY($1) AND g.ts >= $6 AND g.ts < $3`,
  );
  if (spec.chain) {
    // Each meter's last total before start: the first link of the volume chain (no bucket of its own).
    const values = spec.columns.map((c) =>
      c.name === 'tv_first' || c.name === 'tv_last'
        ? 'p.total_volume'
        : c.name === 'tv_inner'
          ? '0::float8'
          : c.type === 'int4'
            ? '0'
            : c.type === 'timestamptz'
              ? `'-infinity'::timestamptz`
              : `NULL::${c.type}`,
    );
    // Where the logs before start were removed by retention, the last quarter rollup before the cut
    // (whole quarters only: before s15, and before the horizon, under which every rollup is final).
    parts.push(
      `SELECT p.id, '-infinity'::timestamptz, ${values.join(', ')} FROM (
         SELECT i.id, coalesce(
           (SELECT total_volume FROM ${logTable} WHERE ${idc} = i.id AND ts < $2
               AND total_volume IS NOT NULL ORDER BY ts DESC LIMIT 1),
           (SELECT tv_last FROM ${t} r WHERE r.${idc} = i.id AND r.level = 15 AND r.bucket < least($5::timestamptz, ${HORIZON_SQL})
               AND r.tv_last IS NOT NULL ORDER BY r.bucket DESC LIMIT 1)) AS total_volume
         FROM unnest($1::int[]) AS i(id)) p WHERE p.total_volume IS NOT NULL`,
    );
  }
  return `${staleCte(spec, level)} units AS (${parts.join('\n  UNION ALL\n  ')})`;
}

/**
 * The rollup level of a request and the parameters of its statements: ids, start, end, zone, then
 * the instants that split the range between the sources (splitRange), times as ISO text.
 */
export function summaryParams(req: SummaryRequest) {
  const level = unitLevel(req.interval, req.zone, req.start, req.end);
  const { s15, e15, a, b } = splitRange(req.start, req.end, level);
  const iso = (t: number) => new Date(t).toISOString();
  const times = [req.start, req.end].map(iso);
  return { level, params: [req.ids, ...times, req.zone, ...[s15, e15, a, b].map(iso)] };
}

/** The encoded summaries of one equipment, in bucket order. */
export interface EquipmentSummaries {
  id: number;
  text: string;
}

/** The summaries of one group of ids sharing a zone, in id then bucket order; no entry for an id without data. */
export async function querySummaries(
  db: Queryable,
  kind: TelemetryKind,
  req: SummaryRequest,
  format: Format,
): Promise<EquipmentSummaries[]> {
  const spec = UNITS[kind];
  const { level, params } = summaryParams(req);
  // indexOrder: every rollup row and mark is then looked up by its key. Without statistics the check
  // that a rollup row has no mark was planned as a bitmap scan of all the marks of the kind for every
  // row: rows × marks.
  return db.query<EquipmentSummaries>(summarySql(spec, req.interval, level, format), params, {
    indexOrder: true,
  });
}

/** Elements a request may produce at most (ids × buckets), bounding the work and the response. */
export function estimateElements(
  req: Pick<SummaryRequest, 'ids' | 'start' | 'end' | 'interval'>,
): number {
  const width = { '15m': QUARTER, '1h': 3_600_000, '1d': 86_400_000, all: Infinity }[req.interval];
  return req.ids.length * (Math.ceil((req.end - req.start) / width) + 2);
}
