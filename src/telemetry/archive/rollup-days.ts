import type { TelemetryKind } from '../kinds.js';
import type { UnitColumn } from '../rollups/unit-columns.js';
import { UNITS } from '../rollups/units.js';
import { fromWhole, scaleOf, wholeOf } from './scale.js';

// Compact rollups of archived days (migrations/024_rollup_days.sql, docs/storage.md): the archive pass
// moves an archived day's 15-minute and hourly rollup rows into one row per level of
// <kind>_rollup_days, its units in arrays in bucket order; the day's own row (level 1440) stays a
// row. Reads of those levels select from `rollupRows`, the rows and the archived units of their
// range; an upload into an archived day moves its units back with its logs (days.ts restoreDaysSql).
// Exactness as in days.ts: times are whole milliseconds from the day's start (a row with finer times
// is refused: the insert fails on `n`, and the pass sets the day aside), doubles are whole numbers
// and a scale only when that gives back their 8 bytes, everything else is kept as itself.

/** The levels whose rows an archived day keeps in arrays (days stay rows). */
export const ARCHIVED_LEVELS = [15, 60] as const;

export const rollupDaysTable = (kind: TelemetryKind) => `${kind}_rollup_days`;

const isFloat = (c: UnitColumn) => c.type === 'float8';
const isTime = (c: UnitColumn) => c.type === 'timestamptz';
/** A count of samples carrying a field: often every sample of the unit, then kept as a null array. */
export const isCount = (c: UnitColumn) => c.type === 'int4' && /_n$/.test(c.name);
/** A time column's value as whole-or-not milliseconds from the day's start `day` (SQL). */
const offset = (v: string, day: string) => `extract(epoch FROM ${v} - ${day}) * 1000`;

/** The stored columns of a unit column: its array (and `_m`, `_k` for doubles). */
const storedColumns = (c: UnitColumn) =>
  isFloat(c) ? [c.name, `${c.name}_m`, `${c.name}_k`] : [c.name];
const arrayColumns = (c: UnitColumn) => (isFloat(c) ? [c.name, `${c.name}_m`] : [c.name]);

/**
 * Moves the rollup rows of levels 15 and 60 of the UTC day [$2, $3) of the equipment $1 (int[]) into
 * their archive rows; returns `n`, how many units moved. Run by the pass in the transaction that
 * archives the day's logs, after them.
 */
export function moveRollupsSql(kind: TelemetryKind): string {
  const spec = UNITS[kind];
  const idc = spec.idColumn;
  const day = '$2::timestamptz';
  const times = spec.columns.filter(isTime).map((c) => c.name);
  const floats = spec.columns.filter(isFloat).map((c) => c.name);
  // Times as milliseconds from their unit's bucket: the same few values recur from unit to unit,
  // which compresses (from the day's start, every value differs).
  const whole = times
    .map(
      (c) =>
        `coalesce(bool_and(${offset(`m.${c}`, 'm.bucket')} = trunc(${offset(`m.${c}`, 'm.bucket')})), true)`,
    )
    .join(' AND ');
  const ordered = (v: string) => `array_agg(${v} ORDER BY m.bucket)`;
  const values = spec.columns.flatMap((c) =>
    isFloat(c)
      ? [
          `CASE WHEN s.${c.name}_k IS NULL THEN ${ordered(`m.${c.name}`)} END`,
          `CASE WHEN s.${c.name}_k IS NOT NULL THEN ${ordered(`CASE WHEN s.${c.name}_k IS NOT NULL THEN ${wholeOf(`m.${c.name}`, `s.${c.name}_k`)} END`)} END`,
          `s.${c.name}_k`,
        ]
      : isTime(c)
        ? [ordered(`(${offset(`m.${c.name}`, 'm.bucket')})::int`)]
        : isCount(c)
          ? [
              `CASE WHEN bool_and(m.${c.name} = m.count) THEN NULL ELSE ${ordered(`m.${c.name}`)} END`,
            ]
          : [ordered(`m.${c.name}`)],
  );
  const groupBy = ['s.id', 's.level', 's.n', 's.whole', ...floats.map((c) => `s.${c}_k`)];
  return `WITH moved AS (
      DELETE FROM ${spec.rollupTable} WHERE ${idc} = ANY($1::int[]) AND level IN (${ARCHIVED_LEVELS.join(', ')})
        AND bucket >= ${day} AND bucket < $3::timestamptz RETURNING *),
    s AS MATERIALIZED (SELECT m.${idc} AS id, m.level, count(*)::int AS n, ${whole || 'true'} AS whole
            ${floats.map((c) => `, ${scaleOf(`m.${c}`)} AS ${c}_k`).join('')}
          FROM moved m GROUP BY m.${idc}, m.level),
    ins AS (INSERT INTO ${rollupDaysTable(kind)} (${idc}, day, level, n, b, ${spec.columns.flatMap(storedColumns).join(', ')})
      SELECT s.id, ${day}, s.level, CASE WHEN s.whole THEN s.n END,
             CASE WHEN s.n < 1440 / s.level THEN ${ordered(`(extract(epoch FROM m.bucket - ${day}) / 60 / m.level)::int2`)} END,
             ${values.join(', ')}
        FROM moved m JOIN s ON s.id = m.${idc} AND s.level = m.level
       GROUP BY ${groupBy.join(', ')} RETURNING n)
    SELECT coalesce(sum(n), 0)::int AS n FROM ins`;
}

/**
 * The columns of an archive row that unitsOf reads for the unit columns `names` (all by default):
 * its arrays, and the scales of its doubles.
 */
export function unitArrays(
  kind: TelemetryKind,
  names?: string[],
): { arrays: string[]; scales: string[] } {
  const spec = UNITS[kind];
  const columns = names ? spec.columns.filter((c) => names.includes(c.name)) : spec.columns;
  // `count` is never null: its array gives every row its length, whatever else is read.
  const arrays = [
    'b',
    ...(columns.some((c) => c.name === 'count') ? [] : ['count']),
    ...columns.flatMap(arrayColumns),
  ];
  return { arrays, scales: columns.filter(isFloat).map((c) => `${c.name}_k`) };
}

/**
 * The select list of units: `bucket` and the unit columns `names` (all by default), of the archive
 * row's columns `row(c)` (day, level, the scales, the arrays) and one unit's elements `unit(c)` (of
 * the arrays of unitArrays), `place` its 0-based place in the day's arrays (SQL).
 */
export function unitSelect(
  kind: TelemetryKind,
  names: string[] | undefined,
  row: (c: string) => string,
  unit: (c: string) => string,
  place: string,
): string {
  const spec = UNITS[kind];
  const columns = names ? spec.columns.filter((c) => names.includes(c.name)) : spec.columns;
  // A row holding every bucket of its day keeps no `b`: a unit's place in the arrays is its bucket.
  const bucket = `${row('day')} + (coalesce(${unit('b')}, ${place}) * ${row('level')})::float8 * interval '1 minute'`;
  const values = columns.map((c) =>
    isFloat(c)
      ? `CASE WHEN ${row(`${c.name}_k`)} IS NULL THEN ${unit(c.name)} ELSE ${fromWhole(unit(`${c.name}_m`), row(`${c.name}_k`))} END AS ${c.name}`
      : isTime(c)
        ? `${bucket} + ${unit(c.name)}::float8 * interval '1 millisecond' AS ${c.name}`
        : isCount(c)
          ? `CASE WHEN ${row(c.name)} IS NULL THEN ${unit('count')} ELSE ${unit(c.name)} END AS ${c.name}`
          : `${unit(c.name)} AS ${c.name}`,
  );
  return `${bucket} AS bucket, ${values.join(', ')}`;
}

/**
 * The units of the archive row `a` as a subquery (for CROSS JOIN LATERAL): `bucket` and the unit
 * columns `names` (all by default), in bucket order. Only the arrays of those columns are read.
 */
export function unitsOf(kind: TelemetryKind, a = 'a', names?: string[]): string {
  const { arrays } = unitArrays(kind, names);
  const select = unitSelect(
    kind,
    names,
    (c) => `${a}.${c}`,
    (c) => `u.${c}`,
    'u.o - 1',
  );
  return `(SELECT ${select}
      FROM unnest(${arrays.map((c) => `${a}.${c}`).join(', ')}) WITH ORDINALITY AS u(${arrays.join(', ')}, o))`;
}

export interface RollupRange {
  /** SQL condition on the id column, after it (`= $1`, `= ANY($1)`, `= i.id`). */
  ids: string;
  /** The level: a number, or an SQL expression (`s.level`). */
  level: number | string;
  /** SQL timestamptz expressions bounding the buckets: from (included), to (excluded). */
  from: string;
  to: string;
  /** The unit columns wanted (all by default). */
  columns?: string[];
}

/**
 * The rollups of a kind at one level in a range, as a derived table of the rollup table's columns
 * (id column, level, bucket, the unit columns wanted): its rows, and the units of the archive rows of
 * the days the range touches (found by key; a day's rows and its archive row never exist together).
 * Days (level 1440) are rows only. No order: a reader that needs one says ORDER BY.
 */
export function rollupRows(kind: TelemetryKind, r: RollupRange): string {
  const spec = UNITS[kind];
  const idc = spec.idColumn;
  const names = r.columns ?? spec.columns.map((c) => c.name);
  const rows = `SELECT ${idc}, level, bucket, ${names.join(', ')} FROM ${spec.rollupTable}
      WHERE ${idc} ${r.ids} AND level = ${r.level} AND bucket >= ${r.from} AND bucket < ${r.to}`;
  if (typeof r.level === 'number' && !(ARCHIVED_LEVELS as readonly number[]).includes(r.level))
    return `(${rows})`;
  return `(${rows}
    UNION ALL
    SELECT a.${idc}, a.level, u.bucket, ${names.map((n) => `u.${n}`).join(', ')} FROM ${rollupDaysTable(kind)} a
      CROSS JOIN LATERAL ${unitsOf(kind, 'a', names)} u
     WHERE a.${idc} ${r.ids} AND a.level = ${r.level} AND a.day > (${r.from})::timestamptz - interval '1 day' AND a.day < ${r.to}
       AND u.bucket >= ${r.from} AND u.bucket < ${r.to})`;
}

/**
 * The value of `column` in the last quarter (level 15) of the equipment `id` before `t` where it is
 * not null, among the rows and the archive (one row at most, `bucket, v`): the rows by their key, the
 * archive day by day from the nearest, decoding only the days between t and the row found.
 */
export function lastQuarter(kind: TelemetryKind, id: string, t: string, column: string): string {
  const spec = UNITS[kind];
  const idc = spec.idColumn;
  const row = (c: string) =>
    `(SELECT ${c} FROM ${spec.rollupTable} r WHERE r.${idc} = ${id} AND r.level = 15 AND r.bucket < ${t}
        AND r.${column} IS NOT NULL ORDER BY r.bucket DESC LIMIT 1)`;
  return `(SELECT v FROM (
      ${row(`r.bucket, r.${column} AS v`)}
      UNION ALL
      (SELECT x.bucket, x.v FROM ${rollupDaysTable(kind)} a CROSS JOIN LATERAL (
          SELECT u.bucket, u.${column} AS v FROM ${unitsOf(kind, 'a', [column])} u
           WHERE u.bucket < ${t} AND u.${column} IS NOT NULL ORDER BY u.bucket DESC LIMIT 1) x
        WHERE a.${idc} = ${id} AND a.level = 15 AND a.day < ${t}
          AND a.day > coalesce(${row('r.bucket')}, '-infinity') - interval '1 day'
        ORDER BY a.day DESC LIMIT 1)) q ORDER BY bucket DESC LIMIT 1)`;
}

/**
 * CTEs that move archived units back to rows, for the days of the equipment $1 (int[]) starting at $2
 * (timestamptz[], pairwise): `rgone` the archive rows removed, `rback` the rows inserted.
 */
export function restoreRollupsCtes(kind: TelemetryKind): string {
  const spec = UNITS[kind];
  const idc = spec.idColumn;
  const names = spec.columns.map((c) => c.name);
  return `rgone AS (
      DELETE FROM ${rollupDaysTable(kind)} a USING unnest($1::int[], $2::timestamptz[]) AS k(id, day)
       WHERE a.${idc} = k.id AND a.day = k.day RETURNING a.*),
    rback AS (INSERT INTO ${spec.rollupTable} (${idc}, level, bucket, ${names.join(', ')})
      SELECT a.${idc}, a.level, u.bucket, ${names.map((n) => `u.${n}`).join(', ')} FROM rgone a CROSS JOIN LATERAL ${unitsOf(kind)} u
      ON CONFLICT DO NOTHING RETURNING 1)`;
}
