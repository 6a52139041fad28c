import { KINDS, type TelemetryKind } from '../kinds.js';
import { UNITS } from '../rollups/units.js';
import { ARCHIVED_LEVELS, isCount, rollupDaysTable, unitArrays } from './rollup-days.js';
import { daysTable } from './days.js';
import { fromWhole } from './scale.js';

// Slices of archived days (days.ts, rollup-days.ts) for reads of many short ranges of one equipment,
// such as plot values (download/plot.ts): the ranges, cut at UTC days, are given as "pieces" grouped by
// the archive row they read (its key: the day, and the level for rollups). Each archive row is found by
// its key (only for the keys a reader keeps, Pieces.keep: e.g. the days it found archived) and its
// arrays are decompressed once (a whole-array slice makes a plain copy, held while its pieces are
// read); each piece then takes only its own elements: the subscripts between two found by the
// position of a bucket in the day (rollups), by the even spacing of the logs, or by a binary search of
// their times (width_bucket), each element the arrays' subscript. So a day is neither decoded whole
// nor decoded again for every range that touches it. Units are decoded as rollup-days.ts unitsOf
// decodes them; all times (logs' and units') are given back as epoch milliseconds (float8): all
// archived times are whole milliseconds, so these are the very numbers the rows' times give.

/**
 * The pieces, as SQL expressions of parameter arrays (1-based, in the order of their keys):
 * `first`/`count` per key, the subscripts of its pieces in `from`/`to`; `from`/`to` per piece, its
 * range in milliseconds (logs) or in buckets of its level (rollups) from the day's start.
 */
export interface Pieces {
  /** SQL condition on the id column, after it (`= $1`). */
  ids: string;
  /** Per key: its day (epoch ms, float8[]), first piece and count of pieces (int4[]). */
  days: string;
  first: string;
  count: string;
  /** Per piece (int4[]): from (included) and to (excluded). */
  from: string;
  to: string;
  /**
   * SQL condition on a key (`k.day`, and `k.level` for rollups) for its archive row to be looked up
   * (e.g. that the day is among the archived ones, archivedKey): the other keys are not read.
   */
  keep?: string;
}

const plainCopy = (c: string) => `x_.${c}[:] AS ${c}`;
/** The key's condition (Pieces.keep): a filter of the keys, before their archive rows are looked up. */
const keep = (p: Pieces) => (p.keep ? ` WHERE ${p.keep}` : '');

/**
 * SQL: whether `key` (float8) is one of `keys`, a sorted float8[] (SQL expression; a scalar subquery
 * is evaluated once), by the binary search of width_bucket.
 */
export const archivedKey = (key: string, keys: string) =>
  `coalesce((${keys})[width_bucket(${key}, ${keys})] = ${key}, false)`;

/**
 * A piece's elements: `p` (a derived table of pieces: `piece`, `lo`, `hi` and the archive row's
 * columns) with `s`, each subscript from lo to hi, and the arrays' elements there (`arrays`), and
 * the row's columns `row` as `a_<column>`. The subscripts are a set-returning function of the select
 * list, not a lateral function scan: a scan parameterized by the arrays could be memoized, its cache
 * hashing and copying whole arrays for every piece. Each element is then the array's subscript (the
 * arrays' copies are flat, so that is an offset where an array holds no null): cheaper than a slice
 * of each array made and unnested for every piece.
 */
const elements = (p: string, arrays: string[], row: string[]) =>
  `(SELECT e.piece, ${row.map((c) => `e.a_${c}`).join(', ')}, e.s, ${arrays.map((c) => `e.e_${c}[e.s] AS ${c}`).join(', ')}
      FROM (SELECT p.piece, ${[...row.map((c) => `p.${c} AS a_${c}`), ...arrays.map((c) => `p.${c} AS e_${c}`)].join(', ')},
          generate_series(p.lo, p.hi) AS s FROM ${p} p) e)`;

/**
 * The archived logs of the pieces, as a derived table: `piece` (the piece's subscript), `t` (epoch
 * ms) and the kind's columns `names`. Pieces are ranges of logs' times within their day.
 */
export function logSlices(kind: TelemetryKind, p: Pieces, names: string[]): string {
  const spec = KINDS[kind];
  const fields = spec.fields.filter((f) => names.includes(f.column));
  const arrays = [
    'tms',
    ...fields.flatMap((f) => (f.type === 'float8' ? [f.column, `${f.column}_m`] : [f.column])),
  ];
  const scales = fields.filter((f) => f.type === 'float8').map((f) => `${f.column}_k`);
  // The first log at or after offset `o` (ms from the day's start), 1-based; and the count of logs
  // before `o` (the last subscript before it): evenly spaced (t0 + (i - 1) × step; one log: step 0)
  // or by their times.
  const first = (o: string) => `CASE WHEN x.tms IS NOT NULL THEN width_bucket((${o}) - 1, x.tms) + 1
      WHEN x.step = 0 THEN CASE WHEN x.t0 >= ${o} THEN 1 ELSE 2 END
      ELSE greatest(1, ceil(((${o}) - x.t0)::numeric / x.step)::int + 1) END`;
  const before = (o: string) => `CASE WHEN x.tms IS NOT NULL THEN width_bucket((${o}) - 1, x.tms)
      WHEN x.step = 0 THEN CASE WHEN x.t0 < ${o} THEN 1 ELSE 0 END
      ELSE least(x.n, greatest(0, ceil(((${o}) - x.t0)::numeric / x.step)::int)) END`;
  const values = fields.map((f) =>
    f.type === 'float8'
      ? `CASE WHEN u.a_${f.column}_k IS NULL THEN u.${f.column} ELSE ${fromWhole(`u.${f.column}_m`, `u.a_${f.column}_k`)} END AS ${f.column}`
      : `u.${f.column}`,
  );
  const pieces = `(SELECT i.i AS piece, x.*, ${first(`(${p.from})[i.i]`)} AS lo, ${before(`(${p.to})[i.i]`)} AS hi
      FROM unnest(${p.days}, ${p.first}, ${p.count}) AS k(day, pfirst, pcount)
      CROSS JOIN LATERAL (SELECT k.day AS d, k.pfirst, k.pcount, x_.n, x_.t0, x_.step, ${arrays.map(plainCopy).join(', ')}${scales.map((c) => `, x_.${c}`).join('')}
          FROM ${daysTable(kind)} x_ WHERE x_.${spec.idColumn} ${p.ids} AND x_.day = to_timestamp(k.day / 1000) OFFSET 0) x
      CROSS JOIN LATERAL generate_series(x.pfirst, x.pfirst + x.pcount - 1) AS i(i)${keep(p)} OFFSET 0)`;
  return `(SELECT u.piece, u.a_d + coalesce(u.tms, u.a_t0 + (u.s - 1) * u.a_step)::float8 AS t, ${values.join(', ')}
      FROM ${elements(pieces, arrays, ['d', 't0', 'step', ...scales])} u)`;
}

/**
 * The archived rollup units of the pieces, as a derived table: `piece`, `bucket` and the unit columns
 * `names`, as unitsOf (rollup-days.ts) gives them, except that times (`bucket` and time columns) are
 * epoch milliseconds (float8, like logSlices' `t`): an archived unit's times are whole milliseconds
 * from its day's start, so these are the very numbers the rows' times give, without the database's
 * timestamp arithmetic for each. Pieces are ranges of buckets of their key's level (`levels`, int4[]
 * per key: 15 or 60) within its day. Only the arrays of `names` (and `b`) are read.
 */
export function rollupSlices(
  kind: TelemetryKind,
  p: Pieces & { levels: string },
  names: string[],
): string {
  const columns = UNITS[kind].columns.filter((c) => names.includes(c.name));
  const counted = columns.some((c) => c.name === 'count' || isCount(c));
  // `count` only where a unit column needs it: the subscripts (generate_series) give each piece its
  // length, which unitArrays' `count` gives unitsOf.
  const { arrays: all, scales } = unitArrays(kind, names);
  const arrays = counted ? all : all.filter((c) => c !== 'count');
  // A row holding every bucket of its day keeps no `b`: a unit's subscript is its bucket + 1.
  const first = (o: string) =>
    `CASE WHEN x.b IS NULL THEN (${o}) + 1 ELSE width_bucket(((${o}) - 1)::int2, x.b) + 1 END`;
  const before = (o: string) =>
    `CASE WHEN x.b IS NULL THEN ${o} ELSE width_bucket(((${o}) - 1)::int2, x.b) END`;
  const pieces = `(SELECT i.i AS piece, x.*, ${first(`(${p.from})[i.i]`)} AS lo, ${before(`(${p.to})[i.i]`)} AS hi
      FROM unnest(${p.levels}, ${p.days}, ${p.first}, ${p.count}) AS k(level, day, pfirst, pcount)
      CROSS JOIN LATERAL (SELECT k.day AS d, x_.level, k.pfirst, k.pcount, ${arrays.map(plainCopy).join(', ')}${scales.map((c) => `, x_.${c}`).join('')}
          FROM ${rollupDaysTable(kind)} x_ WHERE x_.${UNITS[kind].idColumn} ${p.ids} AND x_.level = k.level
           AND x_.day = to_timestamp(k.day / 1000) OFFSET 0) x
      CROSS JOIN LATERAL generate_series(x.pfirst, x.pfirst + x.pcount - 1) AS i(i)${keep(p)} OFFSET 0)`;
  // The bucket in ms: the day's start, and the bucket's place (b, or its subscript - 1) × level minutes.
  const bucket = `(u.a_d + (coalesce(u.b, u.s - 1) * u.a_level)::float8 * 60000)`;
  const values = columns.map((c) =>
    c.type === 'float8'
      ? `CASE WHEN u.a_${c.name}_k IS NULL THEN u.${c.name} ELSE ${fromWhole(`u.${c.name}_m`, `u.a_${c.name}_k`)} END AS ${c.name}`
      : c.type === 'timestamptz'
        ? `${bucket} + u.${c.name}::float8 AS ${c.name}`
        : isCount(c)
          ? `CASE WHEN u.a_${c.name} IS NULL THEN u.count ELSE u.${c.name} END AS ${c.name}`
          : `u.${c.name} AS ${c.name}`,
  );
  const row = ['d', 'level', ...scales, ...columns.filter((c) => isCount(c)).map((c) => c.name)];
  return `(SELECT u.piece, ${bucket} AS bucket, ${values.join(', ')} FROM ${elements(pieces, arrays, row)} u)`;
}

/** Whether rollups of `level` (minutes) are archived in days' arrays (else rows only). */
export const archivedLevel = (level: number) =>
  (ARCHIVED_LEVELS as readonly number[]).includes(level);

const DAY = 86_400_000;

/** [a, b) (epoch ms) cut at UTC days: each day it touches (its start) and the part in it. */
export function* utcDays(
  a: number,
  b: number,
): Generator<{ day: number; from: number; to: number }> {
  for (let day = Math.floor(a / DAY) * DAY; day < b; day += DAY)
    yield { day, from: Math.max(a, day), to: Math.min(b, day + DAY) };
}

/**
 * Cuts ranges [a, b) (epoch ms) at UTC days into pieces grouped by key (`key` of the range, e.g. its
 * level, and the day), each piece's bounds from its day's start divided by `unit` (ms; bounds are
 * multiples of it): the parameter arrays of Pieces, and per piece the subscript of its range.
 */
export function cutPieces(
  ranges: { key: number; a: number; b: number }[],
  unit: (key: number) => number,
): {
  keys: number[];
  days: number[];
  first: number[];
  count: number[];
  from: number[];
  to: number[];
  range: number[];
} {
  const groups = new Map<
    string,
    { key: number; day: number; pieces: [number, number, number][] }
  >();
  ranges.forEach(({ key, a, b }, r) => {
    for (const { day, from, to } of utcDays(a, b)) {
      const id = `${key}:${day}`;
      let g = groups.get(id);
      if (!g) groups.set(id, (g = { key, day, pieces: [] }));
      const u = unit(key);
      g.pieces.push([(from - day) / u, (to - day) / u, r]);
    }
  });
  const out = {
    keys: [] as number[],
    days: [] as number[],
    first: [] as number[],
    count: [] as number[],
    from: [] as number[],
    to: [] as number[],
    range: [] as number[],
  };
  for (const g of groups.values()) {
    out.keys.push(g.key);
    out.days.push(g.day);
    out.first.push(out.from.length + 1);
    out.count.push(g.pieces.length);
    for (const [from, to, r] of g.pieces) {
      out.from.push(from);
      out.to.push(to);
      out.range.push(r);
    }
  }
  return out;
}
