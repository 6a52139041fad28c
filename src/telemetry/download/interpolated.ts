import type { Access } from '../../auth/access.js';
import { requireEquipment } from '../../auth/access.js';
import { numericArray, takesBinary } from '../../db/array-params.js';
import type { Queryable } from '../../db/index.js';
import { errorCode } from '../../db/deadline.js';
import { badRequest } from '../../errors.js';
import type { Values } from '../../export/records.js';
import { isoTime } from '../../time.js';
import { prefetched, siteZones, type Download } from './index.js';
import { readFloat8 } from './float8-rows.js';
import { MINUTES, readInstants, type InterpolatedBody } from './interpolated-request.js';
import { gridSql, VALUE_WIDTH, valuesSql } from './interpolated-sql.js';
import { coverAll, logPartitions, type LogPartition } from './log-partitions.js';
import { valueBetween } from './value-function.js';
import { windowWidths } from './window-widths.js';
import { isKnownZone } from './zones.js';

// Interpolated values (contract 13): v(t) of each sensor at the instants of a grid on a zone's clock
// or at given times. Each value takes the sample at or before t and the one after it. Both come from
// one indexed read of the logs around t, a window of about three samples on each side as the
// sensor's daily rollups count them over the range (window-widths.ts), and at most WINDOW_ROWS rows
// (interpolated-sql.ts); where the window holds no sample on a side (a gap) or is full, that side is
// one indexed lookup bounded to the day around t, then unbounded where that finds none. Either way
// the work follows the number of values, never the number of logs in the range. One read instead of
// two lookups halves the descents of the index, which are most of the cost. Reads go to the
// partition that holds t, named in the statement (the instants go to the partitions' branches of one
// statement, log-partitions.ts). Over archived days, an instant whose two samples lie in the archived
// day it falls in takes them from that day (each day read once per request) and reads no rows.

export const INTERPOLATED_FIELDS = ['sensorID', 'timestamp', 'value'];
const UNDEFINED_TABLE = '42P01';

/** Checks the request (400/404/403) and returns its records. */
export async function openInterpolated(
  db: Queryable,
  access: Access,
  body: InterpolatedBody,
): Promise<Download> {
  const ids = [...new Set(body.sensorIds)].sort((x, y) => x - y);
  const { times, range } = readInstants(body, ids.length);
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
  // The partitions holding some instant, named in the statement (see valuesSql); instants that no
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
          valuesSql(
            `SELECT t, n FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) WHERE $2::int IS NULL AND $3::text IS NULL`,
            parts,
          ),
          [timeTexts, null, null, ...sensorParams(group)],
          { indexOrder: true },
        )
      : db.query<{ nums: Uint8Array | null }>(
          valuesSql(
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

/** v(t) from a value's numbers (valuesSql, from x[o]) and the samples around t (contract 13). */
function valueAt(x: Float64Array, o: number, stepped: boolean): number | null {
  const [t, latest, pt, pv, nt, nv] = [x[o + 1], x[o + 2], x[o + 3], x[o + 4], x[o + 5], x[o + 6]];
  if (Number.isNaN(pt)) return null;
  if (pt === t) return pv;
  if (stepped) return !Number.isNaN(latest) && t <= latest ? pv : null;
  if (Number.isNaN(nt)) return null;
  return valueBetween({ t: pt, v: pv }, { t: nt, v: nv }, t, stepped);
}
