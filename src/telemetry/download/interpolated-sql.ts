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
  `(SELECT ARRAY[round(date_part('epoch', ts) * 1000), value] FROM ${table} WHERE sensor_id = q.id AND ts ${op} q.qt${bound} ORDER BY ts ${order} LIMIT 1)`;
/**
 * The sample at or before (<=) or after (>) q.qt, [time in ms, value]: from the window w where it holds
 * one and is not full, else in `part` within a day of it, else anywhere.
 */
const around = (part: string, op: '<=' | '>', order: 'DESC' | 'ASC') => {
  const side = op === '<=' ? 'w.prev' : 'w.next';
  return `coalesce(CASE WHEN w.n < ${WINDOW_ROWS} AND ${side} IS NOT NULL THEN ARRAY[round(${side}[1] * 1000), ${side}[2]] END,
    ${probe(part, op, order, ` AND ts ${op === '<=' ? '>' : '<='} q.qt ${op === '<=' ? '-' : '+'} interval '1 day'`)}, ${probe('sensor_logs', op, order, '')})`;
};

/** Most rows a window reads (a full one is not used: it may have stopped before t). */
const WINDOW_ROWS = 32;

/**
 * The logs of (t - delta, t + delta] in `part` (q.delta ms; none when 0): how many (up to WINDOW_ROWS),
 * the last at or before t and the first after it as [epoch seconds, value]. The largest and the
 * smallest of those pairs: seconds come first and are distinct for distinct microseconds.
 */
const window = (part: string) => `CROSS JOIN LATERAL (
      SELECT count(*) AS n, max(ARRAY[date_part('epoch', ts), value]) FILTER (WHERE ts <= q.qt) AS prev,
        min(ARRAY[date_part('epoch', ts), value]) FILTER (WHERE ts > q.qt) AS next
      FROM (SELECT ts, value FROM ${part} WHERE q.delta > 0 AND sensor_id = q.id
        AND ts > q.qt - q.delta * interval '1 millisecond' AND ts <= q.qt + q.delta * interval '1 millisecond'
        LIMIT ${WINDOW_ROWS}) x) w`;

const DAYS = daysTable('sensor');
const ms = (c: string) => `round(date_part('epoch', ${c}) * 1000)`;
/**
 * For the instants the archive does not answer alone (ad, below): archived days (archive/days.ts)
 * can hold a nearer sample than the rows' (prev, next: from the
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
 * The archive's samples, for the instants (of v) and sides that need them: the instants are grouped by
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
 * Instants whose samples both lie in the archived day they fall in (ad, the archive first): the
 * instants sorted by time (qa, once for all sensors) are grouped by UTC day (qd), and each sensor's
 * archived day that holds some instant is read once (its arrays decompressed once, dayArrays) where
 * the sensor has archived logs around that day (i.afirst, i.alast: no lookup over rows only); an
 * instant at or after the day's first log and before its last (a stepped sensor: at or after its
 * first) finds both samples there, by arithmetic on an evenly spaced day or a binary search of its
 * times (dayCount), never by decoding the day: that day is archived, so no other log lies between
 * them (a day's rows and its archive row never exist together). Those instants (done) read nothing
 * else: neither the rows' windows and probes (which find nothing in an archived day) nor the archive
 * again. Every (sensor, instant) is a row of ad, the others with done false, in sensor and time order.
 */
const archiveFirst = `
  qa AS MATERIALIZED (SELECT array_agg(t ORDER BY t, n) AS ts, array_agg(n ORDER BY t, n) AS ns FROM q0),
  qd AS MATERIALIZED (SELECT date_bin('1 day', u.t, ${EPOCH}) AS day, min(u.j)::int AS f, count(*)::int AS c
      FROM qa CROSS JOIN LATERAL unnest(qa.ts) WITH ORDINALITY AS u(t, j) GROUP BY 1 ORDER BY 1),
  ad AS MATERIALIZED (SELECT y.i_id AS id, y.k AS n, y.qt, ${ms('y.qt')} AS t, y.latest, y.i_step AS step, y.delta,
        y.afirst, y.alast, y.done, CASE WHEN y.done THEN ${sample('y', 'y.c')} END AS prev,
        CASE WHEN y.done AND NOT y.i_step THEN ${sample('y', 'y.c + 1')} END AS next
      FROM (SELECT z.*, ${dayCount('z', 'z.qt')} AS c,
            coalesce(z.first_ts <= z.qt AND (z.i_step OR z.qt < z.last_ts), false) AS done
          FROM (SELECT i.id AS i_id, i.latest, i.step AS i_step, i.delta, i.afirst, i.alast, x.*,
                (SELECT ns FROM qa)[g.j] AS k, (SELECT ts FROM qa)[g.j] AS qt
              FROM i CROSS JOIN qd LEFT JOIN LATERAL (SELECT ${dayArrays('sensor')} FROM ${DAYS} a
                  WHERE i.afirst < qd.day + interval '1 day' AND i.alast >= qd.day
                    AND a.sensor_id = i.id AND a.day = qd.day OFFSET 0) x ON true
                CROSS JOIN LATERAL generate_series(qd.f, qd.f + qd.c - 1) AS g(j) OFFSET 0) z OFFSET 0) y)`;

/**
 * For each sensor and instant: the samples around it, the instants in the branch of the partition
 * that holds them (`parts`: the partitions holding some instant; none given: the partitioned table),
 * except those the archive answers alone (ad, above). A stepped sensor needs no sample after t, only
 * its latest sample of all (once per sensor, in a materialized CTE: pulled up into the join, it was
 * looked up again for every instant), to know where v ends. The values come as binary float8
 * (float8-rows.ts), VALUE_WIDTH numbers per value ordered by sensor then n: id, t, latest, prev t,
 * prev v, next t, next v (NaN where none); rows of arrays cost the client more to decode than the
 * lookups took. (OFFSET 0: pulled up, each lookup would run once per use of its array.) Each
 * sensor's instants are read one after the other, in time order (ad's order): read instant by
 * instant, sensor after sensor, the index reads jumped between the sensors' parts of the index, and
 * took 1.5 to 2 times as long. The archive's samples of the other instants (above) join the rows'
 * by (sensor, n), grouped: the later of the two before t, the earlier after it.
 */
export const valuesSql = (instants: string, parts: LogPartition[] | undefined) => {
  const branch = (part: string, where: string) =>
    `SELECT q.id, q.n, q.qt, q.t, q.latest, q.step, q.afirst, q.alast, ${around(part, '<=', 'DESC')} AS prev,
      CASE WHEN q.step THEN NULL ELSE ${around(part, '>', 'ASC')} END AS next
    FROM (SELECT * FROM ad WHERE NOT ad.done${where} OFFSET 0) q ${window(part)}`;
  const at = (x: number) => `to_timestamp(${x / 1000})`;
  const branches = parts
    ? parts.map((p) => {
        const lo = Number.isFinite(p.from) ? [`qt >= ${at(p.from)}`] : [];
        const hi = Number.isFinite(p.to) ? [`qt < ${at(p.to)}`] : [];
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
  i AS MATERIALIZED (SELECT id, step, delta, greatest(latest, ${ms('i0.alast')}) AS latest, afirst, alast FROM i0),${archiveFirst},
  v AS MATERIALIZED (${branches.join('\n  UNION ALL ')}),${archived}
  SELECT string_agg(${float8Bytes(['id', 't', 'latest', 'prev[1]', 'prev[2]', 'next[1]', 'next[2]'])}, ''::bytea ORDER BY id, n) AS nums
  FROM (SELECT ad.id, ad.n, ad.t, ad.latest, ad.prev, ad.next FROM ad WHERE ad.done
    UNION ALL
    SELECT id, n, max(t) AS t, max(latest) AS latest, max(prev) AS prev, min(next) AS next FROM (
      SELECT v.id, v.n, v.t, v.latest, v.prev, v.next FROM v
      UNION ALL SELECT c.id, c.n, NULL, NULL, c.prev, c.next FROM c) g
    GROUP BY id, n) v`;
};

/** The numbers of a value in valuesSql's rows. */
export const VALUE_WIDTH = 7;
