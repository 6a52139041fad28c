import { dayArrays, dayCount, dayLog, daysTable } from '../archive/days.js';
import { EPOCH } from '../rollups/units.js';
import { float8Bytes } from './float8-rows.js';
import { MINUTES, type GridInterval } from './interpolated-request.js';
import type { LogPartition } from './log-partitions.js';

// The statement of interpolated values (interpolated.ts): for each sensor and instant, the samples
// around it, read from a window of the logs around the instant or by indexed lookups.

/** The grid instants of [start, end] (both included) on the clock of $3, as SQL over $1 = start, $2 = end. */
export function gridSql(interval: GridInterval): string {
  const floor =
    interval === '1d'
      ? `date_trunc('day', c AT TIME ZONE $3) AT TIME ZONE $3`
      : `c - ((c AT TIME ZONE $3) - date_bin('${MINUTES[interval]} minutes', c AT TIME ZONE $3, TIMESTAMP '2000-01-01'))`;
  // Every grid step holds one instant of this lattice (a local day lasts at least 23 hours).
  const lattice = interval === '1d' ? '1 hour' : `${MINUTES[interval]} minutes`;
  return `SELECT DISTINCT ${floor} AS t FROM (
      SELECT generate_series(date_bin('${lattice}', $1::timestamptz, ${EPOCH}), $2::timestamptz, interval '${lattice}') AS c
      UNION ALL SELECT $2::timestamptz) x`;
}

const probe = (table: string, op: '<=' | '>', order: 'DESC' | 'ASC', bound: string) =>
  `(SELECT ARRAY[round(date_part('epoch', ts) * 1000), value] FROM ${table} WHERE sensor_id = i.id AND ts ${op} q.t${bound} ORDER BY ts ${order} LIMIT 1)`;
/**
 * The sample at or before (<=) or after (>) q.t, [time in ms, value]: from the window w where it holds
 * one and is not full, else in `part` within a day of it, else anywhere.
 */
const around = (part: string, op: '<=' | '>', order: 'DESC' | 'ASC') => {
  const side = op === '<=' ? 'w.prev' : 'w.next';
  return `coalesce(CASE WHEN w.n < ${WINDOW_ROWS} AND ${side} IS NOT NULL THEN ARRAY[round(${side}[1] * 1000), ${side}[2]] END,
    ${probe(part, op, order, ` AND ts ${op === '<=' ? '>' : '<='} q.t ${op === '<=' ? '-' : '+'} interval '1 day'`)}, ${probe('sensor_logs', op, order, '')})`;
};

/** Most rows a window reads (a full one is not used: it may have stopped before t). */
const WINDOW_ROWS = 32;

/**
 * The logs of (t - delta, t + delta] in `part` (i.delta ms; none when 0): how many (up to WINDOW_ROWS),
 * the last at or before t and the first after it as [epoch seconds, value]. The largest and the
 * smallest of those pairs: seconds come first and are distinct for distinct microseconds.
 */
const window = (part: string) => `CROSS JOIN LATERAL (
      SELECT count(*) AS n, max(ARRAY[date_part('epoch', ts), value]) FILTER (WHERE ts <= q.t) AS prev,
        min(ARRAY[date_part('epoch', ts), value]) FILTER (WHERE ts > q.t) AS next
      FROM (SELECT ts, value FROM ${part} WHERE i.delta > 0 AND sensor_id = i.id
        AND ts > q.t - i.delta * interval '1 millisecond' AND ts <= q.t + i.delta * interval '1 millisecond'
        LIMIT ${WINDOW_ROWS}) x) w`;

const DAYS = daysTable('sensor');
const ms = (c: string) => `round(date_part('epoch', ${c}) * 1000)`;
/**
 * Archived days (archive/days.ts) can hold a nearer sample than the rows' (prev, next: from the
 * window and the probes above, which read rows only) where the sensor has archived logs on that side
 * of t and the rows' sample is not past all of them (the archive's first and last log: one lookup of
 * the days' key per sensor, in `i`). There the archive's sample on that side is looked up too, and
 * the nearer of the two is taken (a day is either rows or archived, never both: their times differ).
 */
const ARCHIVED_PREV = `v.afirst <= v.qt AND (v.prev IS NULL OR v.prev[1] <= ${ms('v.alast')})`;
const ARCHIVED_NEXT = `NOT v.step AND v.alast > v.qt AND (v.next IS NULL OR v.next[1] >= ${ms('v.afirst')})`;
const sample = (x: string, i: string) => {
  const [ts, value] = dayLog('sensor', x, i, 'value');
  return `ARRAY[${ms(ts)}, ${value}]`;
};
/**
 * The archive's samples, for the instants and sides that need them: the instants are grouped by
 * sensor and UTC day, and each such archived day is read once (its arrays decompressed once,
 * dayArrays) for all its instants, each of which finds its samples' places in the day by arithmetic
 * on an evenly spaced day or a binary search of its times (dayCount), without decoding the day.
 * A sample outside the instant's own day (before the day's first log, after its last, or the day not
 * archived) is the last log of the sensor's archived day before it or the first of the one after it
 * (by the days' key). The cost follows the instants and the days they fall in, never those days' logs.
 */
const archived = `
  kd AS MATERIALIZED (SELECT v.id, v.day, array_agg(v.n) AS ns, array_agg(v.qt) AS qts, array_agg(v.p) AS ps, array_agg(v.nx) AS nxs
      FROM (SELECT v.id, v.n, v.qt, date_bin('1 day', v.qt, ${EPOCH}) AS day, coalesce(${ARCHIVED_PREV}, false) AS p, coalesce(${ARCHIVED_NEXT}, false) AS nx FROM v) v
     WHERE v.p OR v.nx GROUP BY v.id, v.day),
  c AS (SELECT y.id, y.k AS n,
        CASE WHEN NOT y.p THEN NULL WHEN y.first_ts <= y.qt THEN ${sample('y', 'y.c')}
          ELSE (SELECT ${sample('b', 'b.n')} FROM ${DAYS} b WHERE b.sensor_id = y.id AND b.day < y.dd ORDER BY b.day DESC LIMIT 1) END AS prev,
        CASE WHEN NOT y.nx THEN NULL WHEN y.last_ts > y.qt THEN ${sample('y', 'y.c + 1')}
          ELSE (SELECT ${sample('b', '1')} FROM ${DAYS} b WHERE b.sensor_id = y.id AND b.day > y.dd ORDER BY b.day LIMIT 1) END AS next
      FROM (SELECT kd.id, kd.day AS dd, u.k, u.qt, u.p, u.nx, x.*, ${dayCount('x', 'u.qt')} AS c
          FROM kd LEFT JOIN LATERAL (SELECT ${dayArrays('sensor')} FROM ${DAYS} a
              WHERE a.sensor_id = kd.id AND a.day = kd.day OFFSET 0) x ON true
            CROSS JOIN LATERAL unnest(kd.ns, kd.qts, kd.ps, kd.nxs) AS u(k, qt, p, nx) OFFSET 0) y)`;

/**
 * For each sensor and instant: the samples around it, the instants in the branch of the partition
 * that holds them (`parts`: the partitions holding some instant; none given: the partitioned table).
 * A stepped sensor needs no sample after t, only its latest sample of all (once per sensor, in a
 * materialized CTE: pulled up into the join, it was looked up again for every instant), to know
 * where v ends. The values come as binary float8 (float8-rows.ts), VALUE_WIDTH numbers per value
 * ordered by sensor then n: id, t, latest, prev t, prev v, next t, next v (NaN where none); rows of
 * arrays cost the client more to decode than the lookups took. (OFFSET 0: pulled up, each lookup
 * would run once per use of its array.) Each sensor's instants are read one after the other (the
 * lateral reference to i keeps the sensors the outer loop): read instant by instant, sensor after
 * sensor, the index reads jumped between the sensors' parts of the index, and took 1.5 to 2 times
 * as long. The archive's samples (above) join the rows' by (sensor, n), grouped: the later of the
 * two before t, the earlier after it.
 */
export const valuesSql = (instants: string, parts: LogPartition[] | undefined) => {
  const branch = (part: string, where: string) =>
    `SELECT i.id, q.n, q.t AS qt, round(date_part('epoch', q.t) * 1000) AS t, i.latest, i.step, i.afirst, i.alast, ${around(part, '<=', 'DESC')} AS prev,
      CASE WHEN i.step THEN NULL ELSE ${around(part, '>', 'ASC')} END AS next
    FROM i CROSS JOIN LATERAL (SELECT * FROM q0 WHERE i.id IS NOT NULL${where} OFFSET 0) q ${window(part)}`;
  const at = (x: number) => `to_timestamp(${x / 1000})`;
  const branches = parts
    ? parts.map((p) => {
        const lo = Number.isFinite(p.from) ? [`t >= ${at(p.from)}`] : [];
        const hi = Number.isFinite(p.to) ? [`t < ${at(p.to)}`] : [];
        return branch(p.table, [...lo, ...hi].map((c) => ` AND ${c}`).join(''));
      })
    : [branch('sensor_logs', '')];
  return `
  WITH q0 AS MATERIALIZED (${instants}),
  i0 AS MATERIALIZED (SELECT u.id, u.step, u.delta, (SELECT round(date_part('epoch', ts) * 1000) FROM sensor_logs
          WHERE sensor_id = u.id ORDER BY ts DESC LIMIT 1) AS latest,
          (SELECT first_ts FROM ${DAYS} WHERE sensor_id = u.id ORDER BY day LIMIT 1) AS afirst,
          (SELECT last_ts FROM ${DAYS} WHERE sensor_id = u.id ORDER BY day DESC LIMIT 1) AS alast
        FROM unnest($4::int[], $5::boolean[], $6::float8[]) AS u(id, step, delta)),
  i AS MATERIALIZED (SELECT id, step, delta, greatest(latest, ${ms('i0.alast')}) AS latest, afirst, alast FROM i0),
  v AS MATERIALIZED (${branches.join('\n  UNION ALL ')}),${archived}
  SELECT string_agg(${float8Bytes(['id', 't', 'latest', 'prev[1]', 'prev[2]', 'next[1]', 'next[2]'])}, ''::bytea ORDER BY id, n) AS nums
  FROM (SELECT id, n, max(t) AS t, max(latest) AS latest, max(prev) AS prev, min(next) AS next FROM (
      SELECT v.id, v.n, v.t, v.latest, v.prev, v.next FROM v
      UNION ALL SELECT c.id, c.n, NULL, NULL, c.prev, c.next FROM c) g
    GROUP BY id, n) v`;
};

/** The numbers of a value in valuesSql's rows. */
export const VALUE_WIDTH = 7;
