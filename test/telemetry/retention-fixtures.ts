import type { Database } from '../../src/db/index.js';

// Logs for the retention suites, written around the upload path (as a bulk load would be) by the
// database itself: one sample every 7 minutes (so quarters hold one to three and cut edges matter) of
// one equipment of each kind, and a second meter with a gap across a month edge.

export const DAY = 86_400_000;
export const iso = (t: number) => new Date(t).toISOString();
/** Start of the UTC month n months after the one holding t. */
export const addMonths = (t: number, n: number) => {
  const d = new Date(t);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1);
};

export interface Equipment {
  sensor: number;
  meter: number;
  meter2: number;
  pump: number;
  tank: number;
}

export async function equipmentOf(db: Database): Promise<Equipment> {
  const first = async (table: string, col: string, n = 1) =>
    (await db.query<{ id: number }>(`SELECT ${col} AS id FROM ${table} ORDER BY 1 LIMIT ${n}`)).map(
      (r) => r.id,
    );
  const [meter, meter2] = await first('flow_meters', 'meter_id', 2);
  return {
    sensor: (await first('sensors', 'sensor_id'))[0],
    meter,
    meter2,
    pump: (await first('pumps', 'pump_id'))[0],
    tank: (await first('tank_groups', 'tank_group_id'))[0],
  };
}

/**
 * Logs every 7 minutes in [from, to). meter2 has none in [gapFrom, gapTo) and its counter resets at
 * `reset`; every fifth meter reading has no total.
 */
export async function writeLogs(
  db: Database,
  eq: Equipment,
  from: number,
  to: number,
  meter2: { gapFrom: number; gapTo: number; reset: number },
): Promise<void> {
  const series = `generate_series($1::timestamptz, $2::timestamptz - interval '1 second', interval '7 minutes') AS s(ts),
    LATERAL (SELECT date_part('epoch', s.ts) AS e) x`;
  const r = (expr: string) => `round((${expr})::numeric, 3)::float8`;
  const range = [iso(from), iso(to)];
  await db.query(
    `INSERT INTO sensor_logs (sensor_id, ts, value) SELECT $3, ts, ${r('100 * sin(e / 5000)')} FROM ${series}`,
    [...range, eq.sensor],
  );
  const total = (base: string) =>
    `CASE WHEN (e / 420)::bigint % 5 = 0 THEN NULL ELSE ${r(base)} END`;
  await db.query(
    `INSERT INTO meter_logs (meter_id, ts, total_volume, pressure, flow_rate)
       SELECT $3, ts, ${total('5000 + e / 60 * 0.5')}, ${r('50 + 5 * cos(e / 7000)')}, ${r('10 + 3 * sin(e / 3000)')} FROM ${series}`,
    [...range, eq.meter],
  );
  await db.query(
    `INSERT INTO meter_logs (meter_id, ts, total_volume, pressure, flow_rate)
       SELECT $3, ts, ${total(`CASE WHEN ts < $6::timestamptz THEN 90000 + e / 60 * 0.25 ELSE (e - date_part('epoch', $6::timestamptz)) / 60 * 0.75 END`)},
              ${r('40 + 5 * cos(e / 6000)')}, NULL FROM ${series}
        WHERE NOT (ts >= $4::timestamptz AND ts < $5::timestamptz)`,
    [...range, eq.meter2, iso(meter2.gapFrom), iso(meter2.gapTo), iso(meter2.reset)],
  );
  await db.query(
    `INSERT INTO pump_logs (pump_id, ts, pressure, running, frequency, status_id, status)
       SELECT $3, ts, ${r('900 + 60 * sin(e / 4000)')}, (e / 3600)::bigint % 3 <> 0, ${r('50 + 5 * sin(e / 2000)')},
              ((e / 3600)::bigint % 3)::int, 'status ' || ((e / 3600)::bigint % 3) FROM ${series}`,
    [...range, eq.pump],
  );
  await db.query(
    `INSERT INTO tank_logs (tank_group_id, ts, entry_tank_level, exit_tank_level, total_volume)
       SELECT $3, ts, ${r('5 + 2 * sin(e / 8000)')}, ${r('4 + 2 * cos(e / 8000)')}, ${r('1000 + 300 * sin(e / 8000)')} FROM ${series}`,
    [...range, eq.tank],
  );
}

/** Rows of a table, optionally in [from, to). */
export async function rows(db: Database, table: string, from = -Infinity, to = Infinity) {
  const [row] = await db.query<{ n: string }>(
    `SELECT count(*) AS n FROM ${table} WHERE ts >= $1::timestamptz AND ts < $2::timestamptz`,
    [from === -Infinity ? '-infinity' : iso(from), to === Infinity ? 'infinity' : iso(to)],
  );
  return Number(row.n);
}

export const exists = async (db: Database, table: string) =>
  (await db.query<{ oid: string | null }>(`SELECT to_regclass($1)::text AS oid`, [table]))[0]
    .oid !== null;

/** Row counts of the four rollup tables. */
export async function rollupCounts(db: Database) {
  const out: Record<string, number> = {};
  for (const t of ['sensor_rollups', 'meter_rollups', 'pump_rollups', 'tank_rollups'])
    out[t] = Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${t}`))[0].n);
  return out;
}
