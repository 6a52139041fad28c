import type { Queryable } from '../../db/index.js';
import type { Format, Values } from '../../export/records.js';
import type { TelemetryKind } from '../kinds.js';
import { EPOCH } from '../rollups/refresh.js';
import { mergeUnits, UNITS, type IntegralField, type UnitSpec } from '../rollups/units.js';
import {
  BUCKET,
  directLevel,
  levelRows,
  summaryFieldNames,
  summaryParams,
  summaryUnits,
  TYPED,
  type SummaryRequest,
} from './summaries.js';
import { integralBetween, type Sample } from './value-function.js';
import { zoneAlignment } from './zones.js';

// Time-weighted summaries (contract 13). The units of each output bucket are those of the
// event-weighted summaries (summaries.ts: rollups where clean, logs of stale quarters and of the cut
// edges), merged with their historian columns: per averaged field, the first and last sample of the
// bucket and the integral between them (links between the bucket's units included, units.ts). What
// lies between a bucket's first sample and the last sample before it (or its last and the next
// one) is added here from those neighbours: the previous and next non-empty buckets, or one
// indexed lookup before start and after end. So a request reads no more logs than the
// event-weighted one, plus two rows per equipment and field, and buckets between samples (gap
// buckets) get elements with count 0.

/** A bucket's line as read: its start (s), its count, then its columns (lineColumns), null where the database wrote none. */
type Row = (number | string | null)[];
/** Where each column sits in a Row. */
type Index = Record<string, number>;

/** Per kind: the DTO fields after id, start, end and count, from a merged row and the time-weighted means. */
const FIELDS: Record<
  TelemetryKind,
  (r: Row | undefined, tw: Record<string, number | null>, x: Index) => unknown[]
> = {
  sensor: (r, tw, x) => [
    r?.[x.v_min] ?? null,
    r?.[x.v_max] ?? null,
    tw.v,
    r?.[x.v_first] ?? null,
    r?.[x.v_last] ?? null,
  ],
  meter: (r, tw, x) => [
    r && r[x.tv_first] !== null ? r[x.tv_inner] : null,
    r?.[x.tv_latest] ?? null,
    tw.fr,
    r?.[x.fr_max] ?? null,
    tw.p,
  ],
  pump: (r, tw, x) => [
    tw.r === null ? null : 100 * tw.r,
    tw.f,
    tw.p,
    r?.[x.p_max] ?? null,
    r?.[x.status_id_latest] ?? null,
    r?.[x.status_latest] ?? null,
  ],
  tank: (r, tw, x) => [
    r?.[x.e_min] ?? null,
    r?.[x.e_max] ?? null,
    tw.e,
    r?.[x.x_min] ?? null,
    r?.[x.x_max] ?? null,
    tw.x,
    r?.[x.tv_latest] ?? null,
  ],
};

/** Columns read per merged row: the sample statistics the DTO shows and the integral columns. */
const SAMPLE_COLUMNS: Record<TelemetryKind, string[]> = {
  sensor: ['v_min', 'v_max', 'v_first', 'v_last'],
  meter: ['tv_first', 'tv_inner', 'tv_latest', 'fr_max'],
  pump: ['p_max', 'status_id_latest', 'status_latest'],
  tank: ['e_min', 'e_max', 'x_min', 'x_max', 'tv_latest'],
};
/** The one column of free text: it travels as its JSON text (no separator survives to_json unescaped). */
const TEXT_COLUMN = 'status_latest';

/**
 * How the service reads a column of a bucket's line: as a number ('n'); as the JSON text the database
 * wrote ('j': statistics the service only passes on in a JSON response, numbers as float8 text as the
 * event-weighted summaries write them, so that they are neither parsed nor formatted here); or as a
 * string decoded from its JSON text ('s': status text in CSV).
 */
type Decode = 'n' | 'j' | 's';

interface Column {
  name: string;
  /** Its text in the line (never containing a separator; '' for null). */
  sql: string;
  decode: Decode;
}

const ms = (c: string) => `round(date_part('epoch', ${c}) * 1000)`;

function sampleColumn(c: string, format: Format): Column {
  if (c === TEXT_COLUMN)
    return { name: c, sql: `to_json(${c})::text`, decode: format === 'csv' ? 's' : 'j' };
  return { name: c, sql: `${c}::text`, decode: format === 'csv' ? 'n' : 'j' };
}

function integralColumns(f: IntegralField): Column[] {
  // A field that is never null (sensors) has its first and last values among the sample columns.
  const n = (name: string, sql: string): Column => ({ name, sql, decode: 'n' });
  return [
    n(`${f.prefix}__t1`, `${ms(f.t1)}::text`),
    ...(f.always ? [] : [n(`${f.prefix}__v1`, `${f.v1}::text`)]),
    n(`${f.prefix}__t2`, `${ms(f.t2)}::text`),
    ...(f.always ? [] : [n(`${f.prefix}__v2`, `${f.v2}::text`)]),
    ...f.modes.map((m) => n(`${f.prefix}__${m}`, `${f.prefix}_${m}::text`)),
  ];
}

/** The columns of a bucket's line after its start (s) and count, in line order. */
function lineColumns(spec: UnitSpec, format: Format): Column[] {
  return [
    ...SAMPLE_COLUMNS[spec.kind].map((c) => sampleColumn(c, format)),
    ...spec.integrals.flatMap(integralColumns),
  ];
}

/** Separators of a line's fields and of the lines: control characters, which no column's text holds. */
const FIELD = '\x1f';
const LINE = '\x1e';

/**
 * One row per equipment with non-empty buckets: its id and its buckets' lines in bucket order, each
 * the bucket's start before the cut (s), its count and lineColumns, as text. Rows of a dozen numeric
 * columns cost the client more to decode (one string and one number per column and row) than the
 * database takes to make them; one text per equipment is decoded here at a fraction of that.
 */
function bucketLinesSql(spec: UnitSpec, req: SummaryRequest, level: number, format: Format): string {
  const direct = directLevel(spec, req.interval, level);
  const group = `CASE WHEN t0 = '-infinity' THEN NULL ELSE ${BUCKET[req.interval].start} END`;
  const line = (t: string) =>
    [`${ms(t)}::text`, 'count::text', ...lineColumns(spec, format).map((c) => c.sql)]
      .map((x) => `coalesce(${x}, '')`)
      .join(` || chr(31) || `);
  const rows = [`SELECT id, ${ms('grp')} AS s, ${line('grp')} AS line FROM merged`];
  if (direct) rows.push(`SELECT id, ${ms('t0')} AS s, ${line('t0')} AS line FROM l`);
  // The lines are joined in the order the sorted subquery gives them (as raw.ts does); the reader
  // checks that order and sorts where it would not hold.
  return `WITH ${summaryUnits(spec, level, direct)},
    merged AS (${mergeUnits(spec, 'units', group, 'id', true)})
    ${direct ? `, l AS (${levelRows(spec, level)})` : ''}
  SELECT id, string_agg(line, chr(30)) AS lines FROM (
    SELECT id, s, line FROM (${rows.join(' UNION ALL ')}) x WHERE ${TYPED} ORDER BY id, s) y
  GROUP BY id ORDER BY id`;
}

/** The lines of one equipment as rows, in bucket order. */
function readLines(text: string, columns: Column[]): Row[] {
  const out: Row[] = [];
  let sorted = true;
  let last = -Infinity;
  for (const line of text.split(LINE)) {
    const f: Row = line.split(FIELD);
    const s = (f[0] = Number(f[0]));
    f[1] = Number(f[1]);
    for (let k = 0; k < columns.length; k++) {
      const x = f[k + 2] as string;
      const d = columns[k].decode;
      if (x === '') f[k + 2] = null;
      else if (d === 'n') f[k + 2] = Number(x);
      else if (d === 's') f[k + 2] = JSON.parse(x) as string;
    }
    if (s <= last) sorted = false;
    last = s;
    out.push(f);
  }
  return sorted ? out : out.sort((x, y) => (x[0] as number) - (y[0] as number));
}

/**
 * The buckets of [start, end) on the zone's clock: [s, a, b] with s the bucket's start before the cut
 * and [a, b) after it. Every bucket holds one instant of a lattice finer than the shortest bucket
 * (quarters; hours for days, which last at least 23 h), plus start and the last millisecond for the
 * cut ones; the database maps each to its bucket as it does for the units.
 */
function bucketsSql(req: SummaryRequest): string {
  const step = req.interval === '1d' ? '1 hour' : '15 minutes';
  const b = BUCKET[req.interval];
  return `SELECT ${ms('grp')} AS s, ${ms('greatest(grp, $2::timestamptz)')} AS a, ${ms(`least(${b.end}, $3::timestamptz)`)} AS b
    FROM (SELECT DISTINCT ${b.start} AS grp FROM (
      SELECT $2::timestamptz AS t0 UNION ALL SELECT $3::timestamptz - interval '1 millisecond'
      UNION ALL SELECT generate_series(date_bin('${step}', $2::timestamptz, ${EPOCH}) + interval '${step}', $3::timestamptz, interval '${step}')) c
      WHERE t0 < $3::timestamptz) x
    WHERE $1::int IS NULL AND $4::text IS NOT NULL ORDER BY grp`;
}

/** Each equipment's last sample of each field before start and first one at or after end: one indexed row each. */
function edgesSql(spec: UnitSpec): string {
  const { logTable, idColumn: idc } = spec;
  const value: Record<string, string> = {
    v: 'value',
    fr: 'flow_rate',
    p: 'pressure',
    r: 'running::int::float8',
    f: 'frequency',
    e: 'entry_tank_level',
    x: 'exit_tank_level',
  };
  const field = (p: string) => value[p].split('::')[0];
  const cols = spec.integrals.flatMap(({ prefix: p }) => [
    `(SELECT ARRAY[${ms('ts')}, ${value[p]}] FROM ${logTable} g WHERE g.${idc} = i.id AND g.ts < $2::timestamptz
        AND g.${field(p)} IS NOT NULL ORDER BY g.ts DESC LIMIT 1) AS ${p}__prev`,
    `(SELECT ARRAY[${ms('ts')}, ${value[p]}] FROM ${logTable} g WHERE g.${idc} = i.id AND g.ts >= $3::timestamptz
        AND g.${field(p)} IS NOT NULL ORDER BY g.ts LIMIT 1) AS ${p}__next`,
  ]);
  // A sensor's interpolation mode comes along (one statement fewer per request).
  const step =
    spec.kind === 'sensor'
      ? `(SELECT step FROM sensors WHERE sensor_id = i.id) AS step`
      : 'NULL::boolean AS step';
  return `SELECT i.id, ${step}, ${cols.join(', ')} FROM unnest($1::int[]) AS i(id) ORDER BY i.id`;
}

const WIDTH_MS = { '15m': 15 * 60_000, '1h': 3_600_000, '1d': 86_400_000 } as const;

/**
 * The buckets computed here where the zone's clock lines up with them over the whole range (UTC
 * quarters, hours and days): the same instants the database gives, without asking it.
 */
function alignedBuckets(req: SummaryRequest): { s: number; a: number; b: number }[] | undefined {
  if (req.interval === 'all') return [{ s: req.start, a: req.start, b: req.end }];
  const align = zoneAlignment(req.zone, req.start, req.end);
  const fits =
    req.interval === '15m'
      ? align !== 'none'
      : req.interval === '1h'
        ? align === 'utc' || align === 'hour'
        : align === 'utc';
  if (!fits) return undefined;
  const w = WIDTH_MS[req.interval];
  const out: { s: number; a: number; b: number }[] = [];
  for (let s = Math.floor(req.start / w) * w; s < req.end; s += w)
    out.push({ s, a: Math.max(s, req.start), b: Math.min(s + w, req.end) });
  return out;
}

export interface TimeWeightedSummaries {
  id: number;
  /** CSV: the records, in DTO field order. */
  rows: Values[];
  /** JSON: the encoded elements (as export/records.ts writes them), joined by ",". */
  text: string;
}

/**
 * The buckets of the latest request: a request's pages (a few equipment each) share them, and a year
 * of hours is 8,760 of them, each with its times as text. Read only, never changed once made.
 */
let lastBuckets: { key: string; list: Bucket[] } | undefined;

/** The time-weighted summaries of one group of ids sharing a zone, by id then bucket. */
export async function queryTimeWeighted(
  db: Queryable,
  kind: TelemetryKind,
  req: SummaryRequest,
  format: Format = 'json',
): Promise<TimeWeightedSummaries[]> {
  const spec = UNITS[kind];
  const { level, params } = summaryParams(req);
  const bucketKey = `${req.start} ${req.end} ${req.interval} ${req.zone}`;
  const known = lastBuckets?.key === bucketKey ? lastBuckets.list : undefined;
  const [rows, buckets, edges] = await Promise.all([
    db.query<{ id: number; lines: string }>(bucketLinesSql(spec, req, level, format), params, {
      indexOrder: true,
    }),
    known ??
      alignedBuckets(req) ??
      db.query<{ s: number; a: number; b: number }>(bucketsSql(req), [null, ...params.slice(1, 4)]),
    db.query<Record<string, number | number[] | boolean | null>>(
      edgesSql(spec),
      params.slice(0, 3),
      { indexOrder: true },
    ),
  ]);
  const bucketList: Bucket[] =
    known ??
    buckets.map((x) => {
      const aIso = new Date(Number(x.a)).toISOString();
      const bIso = new Date(Number(x.b)).toISOString();
      return {
        s: Number(x.s),
        a: Number(x.a),
        b: Number(x.b),
        aIso,
        bIso,
        head: `,"start":"${aIso}","end":"${bIso}","count":`,
      };
    });
  lastBuckets = { key: bucketKey, list: bucketList };
  const names = summaryFieldNames(kind);
  const keys = names.slice(4).map((n) => `,${JSON.stringify(n)}:`);
  const open = `{${JSON.stringify(names[0])}:`;
  const columns = lineColumns(spec, format);
  const index: Index = Object.fromEntries(columns.map((c, k) => [c.name, k + 2]));
  const byId = new Map<number, Row[]>(rows.map((r) => [Number(r.id), readLines(r.lines, columns)]));
  const out: TimeWeightedSummaries[] = [];
  for (const edge of edges) {
    const id = Number(edge.id);
    const fields = spec.integrals.map((f) => ({
      f,
      stepped: f.modes.length === 1 ? f.modes[0] === 'is' : edge.step === true,
      prev: sample(edge[`${f.prefix}__prev`]),
      next: sample(edge[`${f.prefix}__next`]),
    }));
    const json =
      format === 'json'
        ? { open: `${open}${id}`, keys, parts: [] as string[], elements: 0 }
        : undefined;
    const records = summarize(kind, id, bucketList, byId.get(id) ?? [], fields, index, json);
    if (json ? json.elements : records.length)
      out.push({ id, rows: records, text: json ? json.parts.join('') : '' });
  }
  return out;
}

const sample = (x: unknown): Sample | undefined =>
  Array.isArray(x) ? { t: Number(x[0]), v: Number(x[1]) } : undefined;

interface Bucket {
  s: number;
  a: number;
  b: number;
  aIso: string;
  bIso: string;
  /** The JSON of the element between its id and its count. */
  head: string;
}

/**
 * A JSON element's encoding: `open` (its first key and the id) and the keys of the fields after
 * count; the elements made, as the pieces of their text (joined once: cheaper than a string per
 * element joined again) and how many.
 */
interface JsonSink {
  open: string;
  keys: string[];
  parts: string[];
  elements: number;
}

/** A value as JSON: a number as its shortest text, a string as the JSON text the database wrote, null as null. */
const jsonValue = (v: unknown): string =>
  typeof v === 'number'
    ? Number.isFinite(v)
      ? String(v)
      : 'null'
    : typeof v === 'string'
      ? v
      : 'null';

interface FieldState {
  f: IntegralField;
  stepped: boolean;
  prev: Sample | undefined;
  next: Sample | undefined;
}

/** One equipment's elements: walks the buckets with the samples around each (contract 13). */
function summarize(
  kind: TelemetryKind,
  id: number,
  buckets: Bucket[],
  rows: Row[],
  fields: FieldState[],
  x: Index,
  json?: JsonSink,
): Values[] {
  const keys = fields.map(({ f, stepped }) => {
    const k = (c: string) => x[`${f.prefix}__${c}`];
    return {
      t1: k('t1'),
      v1: f.always ? x[f.v1] : k('v1'),
      t2: k('t2'),
      v2: f.always ? x[f.v2] : k('v2'),
      integral: k(stepped ? 'is' : 'il'),
    };
  });
  // The row of each bucket, and per field the first sample of the next bucket that carries it.
  const rowAt: (Row | undefined)[] = new Array(buckets.length);
  let j = 0;
  for (let i = 0; i < buckets.length; i++) {
    while (j < rows.length && (rows[j][0] as number) < buckets[i].s) j++;
    rowAt[i] = j < rows.length && rows[j][0] === buckets[i].s ? rows[j] : undefined;
  }
  // Per field, the first sample after each bucket (time NaN: none): one pass from the end.
  const nextAt = fields.map((st, k) => {
    const key = keys[k];
    const t = new Float64Array(buckets.length);
    const v = new Float64Array(buckets.length);
    let nt = st.next ? st.next.t : NaN;
    let nv = st.next ? st.next.v : NaN;
    for (let i = buckets.length - 1; i >= 0; i--) {
      t[i] = nt;
      v[i] = nv;
      const r = rowAt[i];
      if (r && r[key.t1] !== null) {
        nt = r[key.t1] as number;
        nv = Number(r[key.v1]);
      }
    }
    return { t, v };
  });
  const prevs = fields.map((st) => st.prev);
  const out: Values[] = [];
  const tw: Record<string, number | null> = {};
  for (let i = 0; i < buckets.length; i++) {
    const { a, b } = buckets[i];
    const r = rowAt[i];
    let covered = false;
    for (let k = 0; k < fields.length; k++) {
      const st = fields[k];
      const key = keys[k];
      const prev = prevs[k];
      const nt = nextAt[k].t[i];
      const next = Number.isNaN(nt) ? undefined : { t: nt, v: nextAt[k].v[i] };
      let integral = 0;
      let length = 0;
      const t1 = r ? (r[key.t1] as number | null) : null;
      if (r && t1 !== null) {
        const first = { t: t1, v: Number(r[key.v1]) };
        const last = { t: r[key.t2] as number, v: Number(r[key.v2]) };
        integral = (r[key.integral] as number | null) ?? 0;
        length = (last.t - first.t) / 1000;
        if (prev) {
          integral += integralBetween(prev, first, a, first.t, st.stepped);
          length += (first.t - a) / 1000;
        }
        if (next) {
          integral += integralBetween(last, next, last.t, b, st.stepped);
          length += (b - last.t) / 1000;
        }
        prevs[k] = last;
      } else if (prev && next) {
        integral = integralBetween(prev, next, a, b, st.stepped);
        length = (b - a) / 1000;
      }
      if (length > 0) covered = true;
      tw[st.f.prefix] = length > 0 ? integral / length : null;
    }
    if (!r && !covered) continue;
    const values = FIELDS[kind](r, tw, x);
    const count = r ? (r[1] as number) : 0;
    if (json) {
      const p = json.parts;
      if (json.elements++) p.push(',');
      p.push(json.open, buckets[i].head, String(count));
      for (let f = 0; f < values.length; f++) p.push(json.keys[f], jsonValue(values[f]));
      p.push('}');
    } else out.push([id, buckets[i].aIso, buckets[i].bIso, count, ...values]);
  }
  return out;
}
