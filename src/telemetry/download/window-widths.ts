import type { Queryable } from '../../db/index.js';
import { MAX_DAYS } from './interpolated-request.js';

// How far around each instant the statement of interpolated values reads the logs of a sensor
// (interpolated-sql.ts): wide enough to hold a few samples on each side at the sensor's usual
// spacing, as its daily rollups count its samples.

/** Samples a window is to hold on each side of t, on average. */
const WINDOW_SAMPLES = 3;
const DAY = 86_400_000;

/**
 * Per sensor, the half width (ms) of the window read around each instant (valuesSql): about
 * WINDOW_SAMPLES samples at the sensor's mean spacing over the UTC days of [from, to] (at most
 * MAX_DAYS of them from `from`: given times may lie years apart), as its daily rollups count them;
 * none for a sensor without rollups there (its values come by lookups alone).
 */
export async function windowWidths(
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
