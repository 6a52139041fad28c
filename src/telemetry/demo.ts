import type { Database } from '../db/index.js';
import { Partitions } from './partitions.js';
import { isoSql as iso } from '../time.js';

// A week of telemetry, one sample every five minutes, for every piece of equipment of a freshly
// seeded database, made by the database itself (INSERT ... SELECT over generate_series: one statement
// per table, no rows through the client), plus each equipment's latest value as its current reading.
// The curves are plausible rather than random: daily pressure swings, tanks that fill and are drawn
// down, meters whose total only grows, pumps that stop a few hours a day.
// Five minutes rather than one keeps the first start fast and the embedded database small (a week
// at one minute was 770,000 rows, 95 MB of tables and as much WAL) while every 15-minute bucket of
// a chart still has samples.

export const DEMO_DAYS = 7;
export const DEMO_STEP_MINUTES = 5;
/** Samples per equipment. */
export const DEMO_SAMPLES = (DEMO_DAYS * 24 * 60) / DEMO_STEP_MINUTES;

/** `now` anchors the last sample (on a whole step of the clock). */
export async function seedDemoTelemetry(db: Database, now = new Date()): Promise<void> {
  const step = DEMO_STEP_MINUTES * 60_000;
  const end = new Date(Math.floor(now.getTime() / step) * step);
  const start = new Date(end.getTime() - (DEMO_SAMPLES - 1) * step);
  await new Partitions(db).cover(end.getTime());
  // g.e: seconds since the epoch as float8 (extract() would give slow numeric arithmetic).
  const series = `generate_series($1::timestamptz, $2::timestamptz, interval '${DEMO_STEP_MINUTES} minutes') AS g0(ts), LATERAL (SELECT g0.ts, date_part('epoch', g0.ts) AS e) g`;
  const day = `(2 * pi() * g.e / 86400)`; // phase of the day, in radians
  const minute = `((g.e - date_part('epoch', $1::timestamptz)) / 60)`; // minutes since the start of the week
  const noise = (id: string, amp: number) => `(${amp} * sin(g.e / 97.0 + ${id}) * cos(g.e / 31.0))`;
  const r = (expr: string, digits: number) =>
    `round((${expr}) * ${10 ** digits}) / ${10 ** digits}`;
  const params = [start.toISOString(), end.toISOString()];
  return db.transaction(async (tx) => {
    const statements = [
      `INSERT INTO sensor_logs (sensor_id, ts, value)
         SELECT s.sensor_id, g.ts, ${r(
           `CASE coalesce(s.site_sensor_type_id, 1)
             WHEN 1 THEN 850 + 120 * sin(${day} + s.sensor_id) + ${noise('s.sensor_id', 15)}
             WHEN 2 THEN 9 + 6 * sin(${day} * 2.5 + s.sensor_id)
             WHEN 3 THEN 72 + 14 * sin(${day} - 1.2) + ${noise('s.sensor_id', 1.5)}
             WHEN 4 THEN 8200 + 900 * sin(${day} + 0.4) + ${noise('s.sensor_id', 120)}
             ELSE 2.5 + 1.5 * abs(sin(${day} * 3 + s.sensor_id)) END`,
           2,
         )}
           FROM sensors s, ${series}`,
      `INSERT INTO meter_logs (meter_id, ts, start_ts, total_volume, day_volume, pressure, flow_rate)
         SELECT m.meter_id, g.ts, date_trunc('day', g.ts, 'UTC'),
                ${r(`120000 + (m.meter_id % 97) * 1000 + ${minute} * (5.5 + (m.meter_id % 3))`, 1)},
                ${r(`(g.e - date_part('epoch', date_trunc('day', g.ts, 'UTC'))) / 60 * (5.5 + (m.meter_id % 3))`, 1)},
                ${r(`120 + 12 * sin(${day} + m.meter_id) + ${noise('m.meter_id', 3)}`, 1)},
                ${r(`(5.5 + (m.meter_id % 3)) * 1440 + ${noise('m.meter_id', 250)}`, 1)}
           FROM flow_meters m, ${series}`,
      `INSERT INTO pump_logs (pump_id, ts, pressure, running, frequency, status_id, status)
         SELECT p.pump_id, g.ts, CASE WHEN run.on THEN ${r(`900 + 60 * sin(${day} + p.pump_id)`, 1)} ELSE 40 END,
                run.on, CASE WHEN NOT run.on THEN 0 WHEN p.is_vfd THEN ${r(`48 + 6 * sin(${day} + p.pump_id)`, 1)} ELSE 60 END,
                CASE WHEN run.on THEN 1 ELSE 2 END, CASE WHEN run.on THEN 'Running' ELSE 'Stopped' END
           FROM pumps p, ${series},
                LATERAL (SELECT (floor(g.e / 3600)::bigint + p.pump_id) % 12 >= 2 AS on) run`,
      `INSERT INTO tank_logs (tank_group_id, ts, entry_tank_level, exit_tank_level, total_volume)
         SELECT t.tank_group_id, g.ts, ${r('l.level', 2)}, ${r('greatest(l.level - 0.4, 0)', 2)},
                ${r('l.level / t.maximum_height_level * t.capacity', 1)}
           FROM tank_groups t, ${series},
                LATERAL (SELECT t.minimum_height_level + (t.maximum_height_level - t.minimum_height_level) *
                   (0.15 + 0.7 * mod((${minute} + t.tank_group_id * 37)::numeric, 600)::float8 / 600) AS level) l`,
    ];
    // On the empty tables of a fresh database, building each primary key once after the rows are in
    // is about twice as fast as maintaining it row by row.
    for (const [i, table] of ['sensor_logs', 'meter_logs', 'pump_logs', 'tank_logs'].entries()) {
      const [pk] = await tx.query<{ name: string; def: string }>(
        `SELECT conname AS name, pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = $1::regclass AND contype = 'p'`,
        [table],
      );
      const [any] = await tx.query(`SELECT 1 FROM ${table} LIMIT 1`);
      // Emptying an empty table gives it new files in this transaction: with wal_level minimal (the
      // embedded database) its rows then bypass the write-ahead log, which would otherwise keep a
      // copy of the whole history on disk.
      if (!any) await tx.query(`TRUNCATE ${table}`);
      if (!any) await tx.query(`ALTER TABLE ${table} DROP CONSTRAINT ${pk.name}`);
      await tx.query(statements[i], params);
      if (!any) await tx.query(`ALTER TABLE ${table} ADD CONSTRAINT ${pk.name} ${pk.def}`);
    }
    await tx.query(CURRENT_FROM_LAST_LOG, [end.toISOString()]);
    await tx.query(
      `UPDATE sites SET last_communication = $1::timestamptz WHERE last_communication IS NULL`,
      [end.toISOString()],
    );
  });
}

/** Each equipment's current reading: its latest log, as an upload record (interface 2.10). */
const CURRENT_FROM_LAST_LOG = `
INSERT INTO current_readings (equipment_kind, equipment_id, site_id, ts, record)
SELECT 'sensor', s.sensor_id, s.site_id, l.ts, jsonb_build_object('sensorID', s.sensor_id, 'value', l.value, 'timestamp', ${iso('l.ts')})
  FROM sensors s JOIN sensor_logs l ON l.sensor_id = s.sensor_id AND l.ts = $1::timestamptz
UNION ALL
SELECT 'meter', m.meter_id, m.site_id, l.ts, jsonb_build_object('flowMeterID', m.meter_id, 'timestamp', ${iso('l.ts')},
       'startTimestamp', ${iso('l.start_ts')}, 'totalVolume', l.total_volume, 'dayVolume', l.day_volume, 'pressure', l.pressure, 'flowRate', l.flow_rate)
  FROM flow_meters m JOIN meter_logs l ON l.meter_id = m.meter_id AND l.ts = $1::timestamptz
UNION ALL
SELECT 'pump', p.pump_id, p.site_id, l.ts, jsonb_build_object('sitePumpID', p.pump_id, 'timestamp', ${iso('l.ts')}, 'pressure', l.pressure,
       'running', l.running, 'frequency', l.frequency, 'statusID', l.status_id, 'status', l.status)
  FROM pumps p JOIN pump_logs l ON l.pump_id = p.pump_id AND l.ts = $1::timestamptz
UNION ALL
SELECT 'tank', t.tank_group_id, t.site_id, l.ts, jsonb_build_object('siteTankGroupID', t.tank_group_id, 'entryTankLevel', l.entry_tank_level,
       'exitTankLevel', l.exit_tank_level, 'totalVolume', l.total_volume, 'timestamp', ${iso('l.ts')})
  FROM tank_groups t JOIN tank_logs l ON l.tank_group_id = t.tank_group_id AND l.ts = $1::timestamptz
ON CONFLICT (equipment_kind, equipment_id) DO NOTHING`;
