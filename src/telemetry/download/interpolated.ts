import type { Access } from '../../auth/access.js';
import { requireEquipment } from '../../auth/access.js';
import { numericArray, takesBinary } from '../../db/array-params.js';
import type { Queryable } from '../../db/index.js';
import { errorCode } from '../../db/deadline.js';
import { badRequest, invalidField } from '../../errors.js';
import type { Values } from '../../export/records.js';
import { isoTime, parseRange, parseTime } from '../../time.js';
import { EPOCH } from '../rollups/units.js';
import { nextMonth } from '../retention/horizon.js';
import { archiveBound, archiveName, partitionMonths, partitionName } from '../retention/tables.js';
import { prefetched, siteZones, type Download } from './index.js';
import { float8Bytes, readFloat8 } from './float8-rows.js';
import { valueBetween } from './value-function.js';
import { isKnownZone } from './zones.js';

// Interpolated values (contract 13): v(t) of each sensor at the instants of a grid on a zone's clock
// or at given times. Each value takes the sample at or before t and the one after it. Both come from
// one indexed read of the logs around t, a window of about three samples on each side as the
// sensor's daily rollups count them over the range, and at most WINDOW_ROWS rows; where the window
// holds no sample on a side (a gap) or is full, that side is one indexed lookup bounded to the day
// around t, then unbounded where that finds none. Either way the work follows the number of values,
// never the number of logs in the range. One read instead of two lookups halves the descents of the
// index, which are most of the cost. Reads go to the partition that holds t, named in the statement
// (the instants go to the partitions' branches of one statement): through the partitioned table,
// each read paid for pruning again, about a tenth of its cost.

export type GridInterval = '1m' | '5m' | '15m' | '1h' | '1d';

export interface InterpolatedBody {
  sensorIds: number[];
  start?: string;
  end?: string;
  interval?: GridInterval;
  timeZone?: string;
  times?: string[];
}

export const INTERPOLATED_FIELDS = ['sensorID', 'timestamp', 'value'];
const MAX_DAYS = 366;
export const MAX_VALUES = 100_000;
const MINUTES: Record<GridInterval, number> = { '1m': 1, '5m': 5, '15m': 15, '1h': 60, '1d': 1440 };

/** The grid instants of [start, end] (both included) on the clock of $3, as SQL over $1 = start, $2 = end. */
function gridSql(interval: GridInterval): string {
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
/** Samples a window is to hold on each side of t, on average. */
const WINDOW_SAMPLES = 3;

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

/** A partition of sensor_logs: its table and range [from, to) in epoch ms (open ends infinite). */
export interface LogPartition {
  table: string;
  from: number;
  to: number;
}

/**
 * sensor_logs' partitions: its archive, if there still is one, and its months, as retention knows
 * them (retention/tables.ts).
 */
export async function logPartitions(db: Queryable): Promise<LogPartition[]> {
  const [archive, months] = await Promise.all([archiveBound(db), partitionMonths(db)]);
  const table = 'sensor_logs';
  return [
    ...(archive?.tables.includes(archiveName(table))
      ? [{ table: archiveName(table), from: -Infinity, to: archive.end }]
      : []),
    ...months.map((m) => ({ table: partitionName(table, m), from: m, to: nextMonth(m) })),
  ];
}

/** The partitions, and the partitioned table itself for every range of time none of them holds. */
function coverAll(parts: LogPartition[]): LogPartition[] {
  const out: LogPartition[] = [];
  let from = -Infinity;
  for (const p of parts) {
    if (p.from > from) out.push({ table: 'sensor_logs', from, to: p.from });
    out.push(p);
    from = Math.max(from, p.to);
  }
  if (from < Infinity) out.push({ table: 'sensor_logs', from, to: Infinity });
  return out;
}

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
 * as long.
 */
const VALUES_SQL = (instants: string, parts: LogPartition[] | undefined) => {
  const branch = (part: string, where: string) =>
    `SELECT i.id, q.n, round(date_part('epoch', q.t) * 1000) AS t, i.latest, ${around(part, '<=', 'DESC')} AS prev,
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
  i AS MATERIALIZED (SELECT u.id, u.step, u.delta, (SELECT round(date_part('epoch', ts) * 1000) FROM sensor_logs
          WHERE sensor_id = u.id ORDER BY ts DESC LIMIT 1) AS latest
        FROM unnest($4::int[], $5::boolean[], $6::float8[]) AS u(id, step, delta))
  SELECT string_agg(${float8Bytes(['id', 't', 'latest', 'prev[1]', 'prev[2]', 'next[1]', 'next[2]'])}, ''::bytea ORDER BY id, n) AS nums
  FROM (${branches.join('\n  UNION ALL ')} OFFSET 0) v`;
};

const VALUE_WIDTH = 7;
const UNDEFINED_TABLE = '42P01';

/** Checks the request (400/404/403) and returns its records. */
export async function openInterpolated(
  db: Queryable,
  access: Access,
  body: InterpolatedBody,
): Promise<Download> {
  const ids = [...new Set(body.sensorIds)].sort((x, y) => x - y);
  let times: number[] | undefined;
  let range: { start: number; end: number } | undefined;
  if (body.times !== undefined) {
    if (body.interval !== undefined)
      throw badRequest('give either interval or times, not both', [
        { path: '/times', message: 'not allowed with interval' },
      ]);
    if (body.start !== undefined || body.end !== undefined)
      throw badRequest('with times, start and end are omitted', [
        { path: body.start !== undefined ? '/start' : '/end', message: 'not allowed with times' },
      ]);
    times = body.times.map((text, i) => {
      const t = parseTime(text);
      if (t === undefined) throw invalidField(`/times/${i}`, 'is not an ISO 8601 date-time');
      return t;
    });
    if (ids.length * times.length > MAX_VALUES) throw tooMany(ids.length * times.length);
  } else {
    if (body.interval === undefined)
      throw badRequest('give interval (with start and end) or times', [
        { path: '/interval', message: 'required without times' },
      ]);
    if (body.start === undefined || body.end === undefined)
      throw badRequest('start and end are required with interval', [
        { path: body.start === undefined ? '/start' : '/end', message: 'required with interval' },
      ]);
    range = parseRange(body.start, body.end, MAX_DAYS);
    // Grid instants in [start, end]: at most one per step, plus one (local clocks repeat at most an hour).
    const per = Math.floor((range.end - range.start) / (MINUTES[body.interval] * 60_000)) + 2;
    if (ids.length * per > MAX_VALUES) throw tooMany(ids.length * per);
  }
  const zoneName = body.timeZone ?? 'UTC';
  if (zoneName !== 'site' && !(await isKnownZone(db, zoneName)))
    throw badRequest(`unknown time zone '${zoneName.slice(0, 64)}': use an IANA name or "site"`, [
      { path: '/timeZone', message: 'unknown time zone' },
    ]);
  let [first, last] = range ? [range.start, range.end] : [Infinity, -Infinity];
  for (const t of times ?? []) [first, last] = [Math.min(first, t), Math.max(last, t)];
  // Once the access check has passed (a refused request reads nothing more), what the statements
  // need is read side by side: each a round trip.
  const sites = await requireEquipment(db, access, 'sensor', ids);
  const [stepRows, deltas, allPartitions] = await Promise.all([
    db.query<{ id: number; step: boolean }>(
      `SELECT sensor_id AS id, step FROM sensors WHERE sensor_id = ANY($1::int[])`,
      [ids],
    ),
    windowWidths(db, ids, first, last),
    logPartitions(db),
  ]);
  const steps = new Map(stepRows.map((r) => [r.id, r.step]));
  const zones =
    zoneName === 'site' && range ? await siteZones(db, [...new Set(sites.values())]) : undefined;
  const stepsOf = (group: number[]) => group.map((id) => steps.get(id) ?? false);
  const zoneOf = (id: number) => (zones ? zones.get(sites.get(id)!)! : zoneName);

  // Groups of sensors sharing a zone, in id order, of about half the request's values (at least
  // 1,000 values, at most 10,000): two groups are asked at once (prefetched), on two connections.
  const perSensor = times
    ? times.length
    : Math.ceil(range!.end - range!.start) / (MINUTES[body.interval!] * 60_000) + 2;
  const size = Math.max(
    1,
    Math.min(Math.ceil(ids.length / 2), Math.floor(10_000 / perSensor)),
    Math.ceil(1_000 / perSensor),
  );
  const groups: number[][] = [];
  for (const id of ids) {
    const last = groups[groups.length - 1];
    if (last && zoneOf(last[0]) === zoneOf(id) && last.length < size) last.push(id);
    else groups.push([id]);
  }
  // An array literal made here (ISO text needs no quoting in one), not quoted element by element by the driver.
  const timeTexts = times && `{${times.map(isoTime).join(',')}}`;
  const deltasOf = (group: number[]) => group.map((id) => deltas.get(id) ?? 0);
  // The partitions holding some instant, named in the statement (see VALUES_SQL); instants that no
  // partition holds (past the last month, or before the first once the archive is gone) go through
  // the partitioned table.
  const partitions = coverAll(allPartitions).filter((p) =>
    times
      ? times.some((t) => t >= p.from && t < p.to)
      : p.from <= range!.end && p.to > range!.start,
  );
  const binary = takesBinary(db);
  const sensorParams = (group: number[]) => [
    numericArray(group, 'int4[]', binary),
    numericArray(stepsOf(group), 'boolean[]', binary),
    numericArray(deltasOf(group), 'float8[]', binary),
  ];
  const query = (group: number[], parts: LogPartition[] | undefined) =>
    times
      ? db.query<{ nums: Uint8Array | null }>(
          VALUES_SQL(
            `SELECT t, n FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) WHERE $2::int IS NULL AND $3::text IS NULL`,
            parts,
          ),
          [timeTexts, null, null, ...sensorParams(group)],
          { indexOrder: true },
        )
      : db.query<{ nums: Uint8Array | null }>(
          VALUES_SQL(
            `SELECT t, t AS n FROM (${gridSql(body.interval!)}) g
                WHERE t >= $1::timestamptz AND t <= $2::timestamptz`,
            parts,
          ),
          [
            new Date(range!.start).toISOString(),
            new Date(range!.end).toISOString(),
            zoneOf(group[0]),
            ...sensorParams(group),
          ],
          { indexOrder: true },
        );
  const load = async (group: number[]): Promise<Values[]> => {
    const [{ nums }] = await query(group, partitions).catch((err: unknown) => {
      // A month dropped by retention since the partitions were listed: through the partitioned table.
      if (errorCode(err) === UNDEFINED_TABLE) return query(group, undefined);
      throw err;
    });
    const x = readFloat8(nums);
    const out: Values[] = [];
    for (let o = 0; o < x.length; o += VALUE_WIDTH) {
      out.push([x[o], isoTime(x[o + 1]), valueAt(x, o, steps.get(x[o]) ?? false)]);
    }
    return out;
  };
  return { fields: INTERPOLATED_FIELDS, pages: prefetched(groups, load) };
}

const DAY = 86_400_000;

/**
 * Per sensor, the half width (ms) of the window read around each instant (VALUES_SQL): about
 * WINDOW_SAMPLES samples at the sensor's mean spacing over the UTC days of [from, to] (at most
 * MAX_DAYS of them from `from`: given times may lie years apart), as its daily rollups count them;
 * none for a sensor without rollups there (its values come by lookups alone).
 */
async function windowWidths(
  db: Queryable,
  ids: number[],
  from: number,
  to: number,
): Promise<Map<number, number>> {
  const start = Math.floor(from / DAY) * DAY;
  const end = Math.min(Math.floor(to / DAY) * DAY + DAY, start + MAX_DAYS * DAY);
  const rows = await db.query<{ id: number; n: number }>(
    `SELECT sensor_id AS id, sum(count)::float8 AS n FROM sensor_rollups
      WHERE sensor_id = ANY($1::int[]) AND level = 1440 AND bucket >= $2::timestamptz AND bucket < $3::timestamptz
      GROUP BY sensor_id`,
    [ids, new Date(start).toISOString(), new Date(end).toISOString()],
    { indexOrder: true },
  );
  return new Map(
    rows.map((r) => [
      r.id,
      Number(r.n) > 0
        ? Math.min(DAY, Math.max(1, Math.round((WINDOW_SAMPLES * (end - start)) / Number(r.n))))
        : 0,
    ]),
  );
}

/** v(t) from a value's numbers (VALUES_SQL, from x[o]) and the samples around t (contract 13). */
function valueAt(x: Float64Array, o: number, stepped: boolean): number | null {
  const [t, latest, pt, pv, nt, nv] = [x[o + 1], x[o + 2], x[o + 3], x[o + 4], x[o + 5], x[o + 6]];
  if (Number.isNaN(pt)) return null;
  if (pt === t) return pv;
  if (stepped) return !Number.isNaN(latest) && t <= latest ? pv : null;
  if (Number.isNaN(nt)) return null;
  return valueBetween({ t: pt, v: pv }, { t: nt, v: nv }, t, stepped);
}

const tooMany = (n: number) =>
  badRequest(
    `the request would make about ${n} values, over ${MAX_VALUES}: ask for fewer sensors, a shorter range or a longer interval`,
    [{ path: '/sensorIds', message: 'too many values' }],
  );
