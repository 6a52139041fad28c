import type { Queryable } from '../../db/index.js';
import { KINDS, type KindSpec, type TelemetryKind, type ValueField } from '../kinds.js';
import { restoreRollupsCtes } from './rollup-days.js';
import { fromWhole, P10, scaleOf, wholeOf } from './scale.js';

// The archive's SQL (migrations/022_log_days.sql, docs/storage.md): a day of one equipment's logs as
// one row of <kind>_log_days, its logs in arrays. Everything here is SQL over the database's own
// values, so the logs never leave the database to be archived or read back:
// - `moveDaySql`: the pass (pass.ts) deletes a day's rows and inserts its archive row, one statement;
// - `restoreDaysSql`: an upload into archived days moves them back to rows first (the writer);
// - `logRows`: what a read of logs selects from, the rows and the archived days of its range.
// Exactness: times are whole milliseconds from the day's start (a day whose logs have finer times is
// refused: the insert fails on `n`, and the pass sets that day aside); a double is kept as a whole
// number m and a scale k only when m::float8 / 10^k, the very division that reads it back, gives the
// same 8 bytes (float8send) as the value, checked for every value of the day; otherwise the doubles
// are kept as they are. Booleans, integers, text and times are kept in arrays of their own type.

export const daysTable = (kind: TelemetryKind) => `${kind}_log_days`;

const scaled = (f: ValueField) => f.type === 'float8';
/** The array columns of a kind's days table, in order: per field its array (and `_m` for a double). */
const arrayColumns = (spec: KindSpec) =>
  spec.fields.flatMap((f) => (scaled(f) ? [f.column, `${f.column}_m`] : [f.column]));

/**
 * A lateral subquery `d` giving the logs of the days row `a` (ts, then the kind's columns), in time
 * order. Every array of a row holds one element per log (the times' only when they are not evenly
 * spaced), so unnest's ordinality is the log's place in the day.
 */
export function decodeDays(kind: TelemetryKind, a = 'a'): string {
  return `CROSS JOIN LATERAL ${daySelect(kind, a)} d`;
}

/**
 * decodeDays' subquery alone: the logs of the days row `a`, for a FROM of its own; `withMs`: with
 * their times as milliseconds from the day's start too (`ms`, for dayTimeText); `powers`: the alias
 * of a row of the day's powers of ten (dayPowers), so that a scaled value is one division (the same
 * as fromWhole's) rather than a subscript of P10 per log.
 */
export function daySelect(kind: TelemetryKind, a = 'a', withMs = false, powers?: string): string {
  const spec = KINDS[kind];
  const arrays = ['tms', ...arrayColumns(spec)];
  const values = spec.fields.map((f) =>
    scaled(f)
      ? `CASE WHEN ${a}.${f.column}_k IS NULL THEN u.${f.column} ELSE ${powers ? `u.${f.column}_m::float8 / ${powers}.${f.column}_p` : fromWhole(`u.${f.column}_m`, `${a}.${f.column}_k`)} END AS ${f.column}`
      : `u.${f.column}`,
  );
  return `(
      SELECT ${a}.day + coalesce(u.tms, ${a}.t0 + (u.o - 1) * ${a}.step)::float8 * interval '1 millisecond' AS ts, ${values.join(', ')}${withMs ? `, coalesce(u.tms, ${a}.t0 + (u.o - 1) * ${a}.step) AS ms` : ''}
        FROM unnest(${arrays.map((c) => `${a}.${c}`).join(', ')}) WITH ORDINALITY AS u(${arrays.join(', ')}, o))`;
}

/**
 * The powers of ten of the days row `a`'s scaled columns (`<column>_p`, null where a column is not
 * scaled), a select list for a row of the day's own (daySelect's `powers`); '' for a kind without
 * doubles.
 */
export function dayPowers(kind: TelemetryKind, a = 'a'): string {
  return KINDS[kind].fields
    .filter(scaled)
    .map((f) => `(${P10})[${a}.${f.column}_k + 1] AS ${f.column}_p`)
    .join(', ');
}

/**
 * The columns of the days row `a` with its arrays read once (array_cat with nothing gives the array
 * itself, read from TOAST and decompressed): for a subquery (OFFSET 0) whose row many lookups use
 * (dayCount, dayLog), each of which would otherwise read and decompress the arrays again.
 */
export function dayArrays(kind: TelemetryKind, a = 'a'): string {
  const spec = KINDS[kind];
  const arrays = ['tms', ...arrayColumns(spec)];
  const scales = spec.fields.filter(scaled).map((f) => `${a}.${f.column}_k`);
  return [
    `${a}.${spec.idColumn}`,
    ...['day', 'n', 'first_ts', 'last_ts', 't0', 'step'].map((c) => `${a}.${c}`),
    ...scales,
    ...arrays.map((c) => `array_cat(${a}.${c}, NULL) AS ${c}`),
  ].join(', ');
}

/**
 * SQL: how many logs of the day `x` (a row of dayArrays) are at or before the timestamptz `t`: the
 * place of the last of them (0: none), found without decoding the day: from the grid's first time
 * and step, or by the binary search of width_bucket over the times (whole milliseconds: a log is at
 * or before t when its time is at or before t's millisecond).
 */
export function dayCount(x: string, t: string): string {
  const msOf = `floor(extract(epoch FROM (${t}) - ${x}.day) * 1000)`;
  return `CASE WHEN ${t} < ${x}.first_ts THEN 0 WHEN ${t} >= ${x}.last_ts THEN ${x}.n
      WHEN ${x}.tms IS NULL THEN (${msOf}::int8 - ${x}.t0) / ${x}.step + 1
      ELSE width_bucket(${msOf}::int, ${x}.tms) END`;
}

/**
 * SQL: the time (timestamptz) and a column of the log at place `i` (1 to n) of the day `x` (a row of
 * dayArrays), as daySelect decodes them (the very same expressions, so the same bytes).
 */
export function dayLog(
  kind: TelemetryKind,
  x: string,
  i: string,
  column: string,
): [string, string] {
  const f = KINDS[kind].fields.find((g) => g.column === column);
  if (!f) throw new Error(`no column ${column} in ${kind} logs`);
  const ts = `${x}.day + coalesce(${x}.tms[${i}], ${x}.t0 + ((${i})::int8 - 1) * ${x}.step)::float8 * interval '1 millisecond'`;
  const value = scaled(f)
    ? `CASE WHEN ${x}.${column}_k IS NULL THEN ${x}.${column}[${i}] ELSE ${fromWhole(`${x}.${column}_m[${i}]`, `${x}.${column}_k`)} END`
    : `${x}.${column}[${i}]`;
  return [ts, value];
}

/**
 * SQL: the time of day of a log, `HH:MM:SS.mmm`, from its milliseconds from its day's start (daySelect
 * `ms`): as to_char writes it with HH24:MI:SS.MS for the log's time in UTC (a day starts at a UTC
 * midnight, and its times are whole milliseconds), at about half the cost. One microsecond more
 * makes the time's text always end in six digits of fraction (time's text is the same whatever
 * DateStyle), of which the first three are kept.
 */
export const dayTimeText = (ms: string) =>
  `left((time '00:00' + (${ms} * 1000 + 1) * interval '1 microsecond')::text, 12)`;

export interface LogRange {
  /** SQL condition on the id column, after it (`= $1`, `= ANY($1)`, `= i.id`). */
  ids: string;
  /** SQL timestamptz expressions: from (included), to (excluded); absent: unbounded. */
  from?: string;
  to?: string;
}

/**
 * The logs of a kind in a range, as a derived table of the log table's columns (id column, ts, the
 * fields): its rows, and the logs of its archived days (found by key: the days that can hold a log of
 * the range). Its order is none: a reader that needs one says ORDER BY.
 */
export function logRows(kind: TelemetryKind, r: LogRange): string {
  const spec = KINDS[kind];
  const cols = spec.fields.map((f) => f.column);
  const rowsWhere = [`${spec.idColumn} ${r.ids}`];
  const daysWhere = [`a.${spec.idColumn} ${r.ids}`];
  const logWhere: string[] = [];
  if (r.from) {
    rowsWhere.push(`ts >= ${r.from}`);
    daysWhere.push(`a.day > (${r.from}) - interval '1 day'`, `a.last_ts >= ${r.from}`);
    logWhere.push(`d.ts >= ${r.from}`);
  }
  if (r.to) {
    rowsWhere.push(`ts < ${r.to}`);
    daysWhere.push(`a.day < ${r.to}`, `a.first_ts < ${r.to}`);
    logWhere.push(`d.ts < ${r.to}`);
  }
  return `(SELECT ${spec.idColumn}, ts, ${cols.join(', ')} FROM ${spec.table} WHERE ${rowsWhere.join(' AND ')}
    UNION ALL
    SELECT a.${spec.idColumn}, d.ts, ${cols.map((c) => `d.${c}`).join(', ')} FROM ${daysTable(kind)} a ${decodeDays(kind)}
     WHERE ${[...daysWhere, ...logWhere].join(' AND ')})`;
}

/**
 * The last log of an equipment before `t` (or the first at or after it: `after`) whose `column` is not
 * null, among its rows and its archive, as `ts, <column>` ordered by ts (one row at most): the rows by
 * their index, the archive day by day from the nearest (its key), decoding only days until one holds
 * such a log.
 */
export function nearestLog(
  kind: TelemetryKind,
  id: string,
  t: string,
  side: 'before' | 'after',
  column: string,
  select: string,
): string {
  const spec = KINDS[kind];
  const [op, order] = side === 'before' ? ['<', 'DESC'] : ['>=', 'ASC'];
  const row = (c: string) =>
    `(SELECT ${c} FROM ${spec.table} WHERE ${spec.idColumn} = ${id} AND ts ${op} ${t} AND ${column} IS NOT NULL ORDER BY ts ${order} LIMIT 1)`;
  // Only the days between t and the row found can hold a nearer log (the row's own day is not
  // archived): a range of the days' key, so that a day is decoded only where the rows hold no log
  // nearer than it (the rows' lookup twice, rather than a day decoded for nothing).
  const [bound, dayRange] =
    side === 'before'
      ? [
          `a.first_ts < ${t}`,
          `a.day < ${t} AND a.day > coalesce(${row('ts')}, '-infinity') - interval '1 day'`,
        ]
      : [
          `a.last_ts >= ${t}`,
          `a.day > (${t}) - interval '1 day' AND a.day < coalesce(${row('ts')}, 'infinity')`,
        ];
  return `(SELECT ${select} FROM (
      ${row(`ts, ${column}`)}
      UNION ALL
      (SELECT x.ts, x.${column} FROM ${daysTable(kind)} a CROSS JOIN LATERAL (
          SELECT d.ts, d.${column} FROM ${daySelect(kind)} d
           WHERE d.ts ${op} ${t} AND d.${column} IS NOT NULL ORDER BY d.ts ${order} LIMIT 1) x
        WHERE a.${spec.idColumn} = ${id} AND ${dayRange} AND ${bound}
        ORDER BY a.day ${order} LIMIT 1)) g ORDER BY ts ${order} LIMIT 1)`;
}

/**
 * Moves the logs of one UTC day [$2, $3) of the equipment $1 (int[]) from rows into their archive rows
 * (see the file's head); returns a row per archived equipment: id, n.
 */
export function moveDaySql(kind: TelemetryKind): string {
  const spec = KINDS[kind];
  const idc = spec.idColumn;
  const floats = spec.fields.filter(scaled).map((f) => f.column);
  const aggs = spec.fields.flatMap((f) =>
    scaled(f)
      ? [
          `array_agg(r.${f.column} ORDER BY r.o) AS ${f.column}`,
          `array_agg(CASE WHEN g.${f.column}_k IS NOT NULL THEN ${wholeOf(`r.${f.column}`, `g.${f.column}_k`)} END ORDER BY r.o) AS ${f.column}_m`,
        ]
      : [`array_agg(r.${f.column} ORDER BY r.o) AS ${f.column}`],
  );
  const outs = spec.fields.flatMap((f) =>
    scaled(f)
      ? [
          `CASE WHEN ${f.column}_k IS NULL THEN ${f.column} END`,
          `CASE WHEN ${f.column}_k IS NOT NULL THEN ${f.column}_m END`,
          `${f.column}_k`,
        ]
      : [f.column],
  );
  const gcols = [
    'id',
    'n',
    'whole',
    'first_ts',
    'last_ts',
    'lo',
    'step',
    ...floats.map((c) => `${c}_k`),
  ];
  return `WITH moved AS (
      DELETE FROM ${spec.table} WHERE ${idc} = ANY($1::int[]) AND ts >= $2::timestamptz AND ts < $3::timestamptz RETURNING *),
    r AS (SELECT m.*, extract(epoch FROM m.ts - $2::timestamptz) * 1000 AS off,
            row_number() OVER (PARTITION BY m.${idc} ORDER BY m.ts) AS o FROM moved m),
    s AS (SELECT r.${idc} AS id, count(*)::int AS n, bool_and(r.off = trunc(r.off)) AS whole,
            min(r.ts) AS first_ts, max(r.ts) AS last_ts, min(r.off) AS lo, max(r.off) AS hi
            ${floats.map((c) => `, ${scaleOf(`r.${c}`)} AS ${c}_k`).join('')}
          FROM r GROUP BY r.${idc}),
    -- Made once (MATERIALIZED): inlined, it was planned from the DELETE's estimate of one row and
    -- grouped again for every log of the day (a day of 8,640 logs took minutes).
    g AS MATERIALIZED (SELECT s.*, CASE WHEN s.n = 1 THEN 0 WHEN (s.hi - s.lo) % (s.n - 1) = 0 THEN (s.hi - s.lo) / (s.n - 1) END AS step FROM s),
    agg AS (SELECT ${gcols.map((c) => `g.${c}`).join(', ')},
            g.step IS NOT NULL AND bool_and(r.off = g.lo + (r.o - 1) * g.step) AS grid,
            array_agg(r.off::int ORDER BY r.o) AS tms, ${aggs.join(', ')}
          FROM r JOIN g ON g.id = r.${idc} GROUP BY ${gcols.map((c) => `g.${c}`).join(', ')}),
    ins AS (INSERT INTO ${daysTable(kind)} (${idc}, day, n, first_ts, last_ts, t0, step, tms, ${arrayColumnsWithScales(spec).join(', ')})
      SELECT id, $2::timestamptz, CASE WHEN whole THEN n END, first_ts, last_ts,
             CASE WHEN grid THEN lo::int END, CASE WHEN grid THEN step::int END, CASE WHEN NOT grid THEN tms END,
             ${outs.join(', ')}
        FROM agg RETURNING ${idc} AS id, n)
    SELECT id, n FROM ins ORDER BY id`;
}

const arrayColumnsWithScales = (spec: KindSpec) =>
  spec.fields.flatMap((f) =>
    scaled(f) ? [f.column, `${f.column}_m`, `${f.column}_k`] : [f.column],
  );

/**
 * Moves archived days back to rows, their logs and their rollups (rollup-days.ts): the days of the
 * equipment $1 (int[]) starting at $2 (timestamptz[], pairwise); returns how many logs (`n`) and
 * rollup units (`units`) came back.
 */
export function restoreDaysSql(kind: TelemetryKind): string {
  const spec = KINDS[kind];
  const idc = spec.idColumn;
  const cols = spec.fields.map((f) => f.column);
  return `WITH gone AS (
      DELETE FROM ${daysTable(kind)} a USING unnest($1::int[], $2::timestamptz[]) AS k(id, day)
       WHERE a.${idc} = k.id AND a.day = k.day RETURNING a.*),
    back AS (INSERT INTO ${spec.table} (${idc}, ts, ${cols.join(', ')})
      SELECT a.${idc}, d.ts, ${cols.map((c) => `d.${c}`).join(', ')} FROM gone a ${decodeDays(kind)} RETURNING 1),
    ${restoreRollupsCtes(kind)}
    SELECT (SELECT count(*) FROM back)::int AS n, (SELECT count(*) FROM rback)::int AS units`;
}

/** The advisory lock key of an equipment's day (several test suites share one PostgreSQL: the schema too). */
const LOCK_KEY = (kind: string) =>
  `hashtextextended('${kind}_log_days:' || current_schema() || ':' || k.id || ':' || k.day, 0)`;

/**
 * Takes the days' advisory locks for the transaction, in one order (no deadlock between two
 * takers): shared by uploads (they only move days back, each under its row lock), exclusive by the
 * pass, so that no upload writes rows into a day while the pass moves it, nor the pass a day an
 * upload is writing.
 */
export async function lockDays(
  tx: Queryable,
  kind: TelemetryKind,
  ids: number[],
  days: number[],
  mode: 'shared' | 'exclusive',
): Promise<void> {
  const fn = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  await tx.query(
    `SELECT count(${fn}(key))::int AS n FROM (
       SELECT DISTINCT ${LOCK_KEY(kind)} AS key FROM unnest($1::int[], $2::float8[]) AS k(id, day) ORDER BY 1) x`,
    [ids, days],
  );
}
