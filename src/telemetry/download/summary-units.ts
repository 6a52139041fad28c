import { logRows, nearestLog } from '../archive/days.js';
import { lastQuarter, rollupRows } from '../archive/rollup-days.js';
import { HORIZON_SQL } from '../retention/horizon.js';
import { rawUnits, rollupUnits } from '../rollups/merge-units.js';
import type { UnitSpec } from '../rollups/unit-columns.js';
import { binOf } from '../rollups/units.js';

// The units (rollups/units.ts) that cover a summary request's range, each inside one output bucket:
// rollup rows of the request's level where they are clean, 15-minute rollups at the edges and inside
// stale level buckets, and log rows for stale quarters and for the cut edges finer than a quarter.
// Statement parameters as summaryParams (summary-buckets.ts) gives them: $1 ids, $2 start, $3 end,
// $5 and $6 the quarters' range, $7 and $8 the level's.

/** Clean rows of the level in [levelFrom, levelTo) ($7, $8). */
export function levelRows(spec: UnitSpec, level: number): string {
  const { idColumn: idc, code } = spec;
  const notStale =
    level === 15
      ? `NOT EXISTS (SELECT 1 FROM rollup_dirty d WHERE d.kind = ${code} AND d.equipment_id = r.${idc} AND d.bucket = r.bucket)`
      : `(r.${idc}, r.bucket) NOT IN (SELECT s.id, s.b FROM stale s)`; // hashed once (see summaryUnits)
  // Rows and archived days' units (archive/rollup-days.ts).
  return `SELECT ${rollupUnits(spec)} FROM ${rollupRows(spec.kind, { ids: '= ANY($1)', level, from: '$7', to: '$8' })} r WHERE ${notStale}`;
}

/** Level buckets in [levelFrom, levelTo) holding a stale quarter (levels above 15). */
const staleCte = (spec: UnitSpec, level: number) =>
  level > 15
    ? `stale AS MATERIALIZED (SELECT DISTINCT d.equipment_id AS id, ${binOf(level, 'd.bucket')} AS b FROM rollup_dirty d
         WHERE d.kind = ${spec.code} AND d.equipment_id = ANY($1) AND d.bucket >= $7 AND d.bucket < $8),`
    : '';

/**
 * Each meter's last total before start: the first link of the volume chain (no bucket of its own),
 * among its rows and archived days (archive/days.ts nearestLog).
 * Where the logs before start were removed by retention, the last quarter rollup before the cut
 * (whole quarters only: before quartersFrom, and before the horizon, under which every rollup is
 * final).
 */
function chainStart(spec: UnitSpec): string {
  const values = spec.columns.map((column) =>
    column.name === 'tv_first' || column.name === 'tv_last'
      ? 'p.total_volume'
      : column.name === 'tv_inner'
        ? '0::float8'
        : column.type === 'int4'
          ? '0'
          : column.type === 'timestamptz'
            ? `'-infinity'::timestamptz`
            : `NULL::${column.type}`,
  );
  return `SELECT p.id, '-infinity'::timestamptz, ${values.join(', ')} FROM (
         SELECT i.id, coalesce(
           ${nearestLog(spec.kind, 'i.id', '$2::timestamptz', 'before', 'total_volume', 'g.total_volume')},
           ${lastQuarter(spec.kind, 'i.id', `least($5::timestamptz, ${HORIZON_SQL})`, 'tv_last')}) AS total_volume
         FROM unnest($1::int[]) AS i(id)) p WHERE p.total_volume IS NOT NULL`;
}

/**
 * The CTEs `stale` (levels above 15) and `units`: every unit covering [start, end) but the clean level
 * rows that go out as they are when `direct` (see directLevel).
 */
export function summaryUnits(spec: UnitSpec, level: number, direct: boolean): string {
  const { rollupTable: table, idColumn: idc, logTable, code } = spec;
  const clean = (alias: string) =>
    `NOT EXISTS (SELECT 1 FROM rollup_dirty d WHERE d.kind = ${code} AND d.equipment_id = ${alias}.${idc} AND d.bucket = ${alias}.bucket)`;
  const parts: string[] = [];
  if (level > 0 && !direct) parts.push(levelRows(spec, level));
  if (level > 15) {
    // Clean quarters inside stale level buckets (rows only: a day with a mark is never archived, an
    // upload into an archived day moves its rollups back first): not among the marks of [levelFrom, levelTo), a hashed
    // set made once (NOT IN of columns that are never null). As an anti join, planned without
    // statistics, it read every mark of the equipment for every quarter (1,000 late logs over a year:
    // 8 million rows read, seconds, for a daily summary).
    parts.push(
      `SELECT r.* FROM stale s CROSS JOIN LATERAL (
         SELECT ${rollupUnits(spec)} FROM ${table} r WHERE r.${idc} = s.id AND r.level = 15 AND r.bucket >= s.b
            AND r.bucket < s.b + interval '${level} minutes'
            AND (r.${idc}, r.bucket) NOT IN (SELECT d.equipment_id, d.bucket FROM rollup_dirty d
              WHERE d.kind = ${code} AND d.equipment_id = ANY($1) AND d.bucket >= $7 AND d.bucket < $8) OFFSET 0) r`,
    );
  }
  if (level > 0) {
    parts.push(
      // Clean quarters at the edges, [quartersFrom, levelFrom) and [levelTo, quartersTo).
      // Rows and archived days' units (archive/rollup-days.ts).
      `SELECT ${rollupUnits(spec)} FROM ${rollupRows(spec.kind, { ids: '= ANY($1)', level: 15, from: '$5', to: '$7' })} r WHERE ${clean('r')}`,
      `SELECT ${rollupUnits(spec)} FROM ${rollupRows(spec.kind, { ids: '= ANY($1)', level: 15, from: '$8', to: '$6' })} r WHERE ${clean('r')}`,
      // Logs of stale quarters: rows only, since an archived day holds no stale quarter (the archive
      // pass moves only days without marks, and an upload into an archived day moves it back first).
      `SELECT g.* FROM rollup_dirty d CROSS JOIN LATERAL (
         SELECT ${rawUnits(spec)} FROM ${logTable} g WHERE g.${idc} = d.equipment_id
            AND g.ts >= d.bucket AND g.ts < d.bucket + interval '15 minutes' OFFSET 0) g
       WHERE d.kind = ${code} AND d.equipment_id = ANY($1) AND d.bucket >= $5 AND d.bucket < $6`,
    );
  }
  // Logs of the edges finer than a quarter (with level 0: the whole range, since then the quarters'
  // range is empty at end).
  // Rows and archived days (archive/days.ts logRows: the days by key, each decoded, cut to the edge).
  const logs = (from: string, to: string) =>
    `SELECT ${rawUnits(spec)} FROM ${logRows(spec.kind, { ids: '= ANY($1)', from: `${from}::timestamptz`, to: `${to}::timestamptz` })} g`;
  parts.push(logs('$2', '$5'), logs('$6', '$3'));
  if (spec.chain) parts.push(chainStart(spec));
  return `${staleCte(spec, level)} units AS (${parts.join('\n  UNION ALL\n  ')})`;
}
