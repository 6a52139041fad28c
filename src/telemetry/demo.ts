import type { Database } from '../db/index.js';
import { Partitions } from './partitions.js';
import { isoSql as iso } from '../time.js';
import { HAULED_FROM } from '../provisioning/demo-tickets.js';

// The demo history: DEMO_DAYS whole days (from midnight in each site's zone) up to now, for every
// piece of equipment of a freshly seeded database, made by the database itself (INSERT ... SELECT
// over generate_series: one statement per table, no rows through the client), plus each equipment's
// latest value as its current reading. One sample every 3 hours, every 15 minutes over the last
// DEMO_RECENT_DAYS, every 5 minutes over the last day: the console's 24 h charts (15-minute buckets)
// and 7 d ones (hourly) have samples in every bucket, its 30 d and 1 y ones (daily) eight a day or
// more, and the first start stays short (rolling up 90 days at 15 minutes took 27 s of CPU).
//
// The values tell one consistent story. A pump runs, except for a two-hour stop now and then; while
// it runs its discharge pressure is up and a VFD turns at 44-56 Hz, while stopped the pressure falls
// to the static head and the speed to 0; the sensor that reports its discharge pressure reads the
// same. A flow meter follows the pump of its rank at its site (its flow is 0 while that pump is
// stopped, its volumes add up the flow: the total only grows, the day's volume starts again at
// midnight in the site's zone). A tank group fills with the flow of the site's meter of its rank and
// each haul-off ticket takes its volume out of it, at its time. And, so that
// the demo's alarms are true (src/alarms/demo.ts), by the sites' order: the first site's first pump
// is climbing past its pressure limit over the last DEMO_STORY.surgeMinutes, its first H2S sensor
// read 11.2 ppm for a while about ten hours ago; the second site's first pump tripped
// DEMO_STORY.tripMinutesAgo; the third site went silent DEMO_STORY.silentMinutesAgo.

export const DEMO_DAYS = 90;
export const DEMO_RECENT_DAYS = 7;
/** Minutes between samples: over the last day, the DEMO_RECENT_DAYS before, and older days. */
export const DEMO_STEP_MINUTES = 5;
export const DEMO_COARSE_STEP_MINUTES = 15;
export const DEMO_OLD_STEP_MINUTES = 180;
export const DEMO_STORY = {
  surgeMinutes: 50,
  /** Pressure the surging pump gains over those minutes (psi). */
  surgePsi: 320,
  tripMinutesAgo: 15,
  silentMinutesAgo: 150,
  /** The first site's H2S reading above its limit, minutes before now: [from, to). */
  h2sSpike: [610, 585] as const,
};

/** What each haul-off leaves in its tank (bbl): about a quarter of the tank, never far from the last. */
const HAUL = {
  left: (t: string, k: string) => `(${t}.capacity * 0.25 + 25 * sin((${k}) * 1.3 + ${t}.id))`,
};

/** Sensor type ids of the demo (src/provisioning/demo-site.ts SENSOR_TYPES). */
const TYPE = { discharge: 1, level: 2, temperature: 3, rate: 4, h2s: 5, suction: 6, position: 7 };

/** `now` anchors the last sample (on a whole step of the clock). */
export async function seedDemoTelemetry(db: Database, now = new Date()): Promise<void> {
  const fine = DEMO_STEP_MINUTES * 60_000;
  const coarse = DEMO_COARSE_STEP_MINUTES * 60_000;
  const end = Math.floor(now.getTime() / fine) * fine;
  const old = DEMO_OLD_STEP_MINUTES * 60_000;
  const mid = Math.floor((end - DEMO_RECENT_DAYS * 86_400_000) / old) * old;
  const recent = Math.floor((end - 86_400_000) / coarse) * coarse;
  await new Partitions(db).cover(end);
  // The story's equipment, by the sites' order.
  const [story] = await db.query<{
    surge: number | null;
    trip: number | null;
    h2s: number | null;
    silent: number | null;
  }>(
    `WITH s AS (SELECT site_id, row_number() OVER (ORDER BY site_id) AS n FROM sites)
     SELECT (SELECT min(pump_id) FROM pumps WHERE site_id = (SELECT site_id FROM s WHERE n = 1)) AS surge,
            (SELECT min(pump_id) FROM pumps WHERE site_id = (SELECT site_id FROM s WHERE n = 2)) AS trip,
            (SELECT min(sensor_id) FROM sensors WHERE site_sensor_type_id = ${TYPE.h2s}
                AND site_id = (SELECT site_id FROM s WHERE n = 1)) AS h2s,
            (SELECT site_id FROM s WHERE n = 3) AS silent`,
  );
  const min = (m: number) => `$1::timestamptz - interval '${m} minutes'`;
  // $1 end, $2 start of the five-minute samples, $3 days of history, $4-$7 the story's ids, $8 start
  // of the 15-minute samples.
  const params = [
    new Date(end).toISOString(),
    new Date(recent).toISOString(),
    DEMO_DAYS,
    story?.surge ?? 0,
    story?.trip ?? 0,
    story?.h2s ?? 0,
    story?.silent ?? 0,
    new Date(mid).toISOString(),
  ];
  // Each site's span: whole days from midnight in its zone; the silent site's ends early. (It names
  // every parameter, so that each statement types them all.)
  // The 15-minute samples begin on the site's grid of older ones (from its midnight), at $8 or just before.
  const span = `(SELECT *, t0 + floor(date_part('epoch', $8::timestamptz - t0) / ${DEMO_OLD_STEP_MINUTES * 60}) * interval '${DEMO_OLD_STEP_MINUTES} minutes' AS mid
                   FROM (SELECT site_id, (date_trunc('day', $1::timestamptz AT TIME ZONE coalesce(time_zone, 'UTC')) - $3::int * interval '1 day') AT TIME ZONE coalesce(time_zone, 'UTC') AS t0,
                                coalesce(time_zone, 'UTC') AS tz, $4::int AS surge, $5::int AS trip, $6::int8 AS h2s,
                                CASE WHEN site_id = $7::int THEN ${min(DEMO_STORY.silentMinutesAgo)} ELSE $1::timestamptz END AS t1
                           FROM sites) s0)`;
  // g.ts the sample's time, g.e its epoch seconds (float8: extract() gives slow numeric arithmetic),
  // g.step its interval in minutes: every 3 hours, then every 15 minutes from about $8, every 5 from $2.
  const tier = (from: string, to: string | null, step: number) =>
    `SELECT ts, ${step} AS step FROM generate_series(${from}, ${to ? `least(${to}, sp.t1 + interval '1 second') - interval '${step} minutes'` : 'sp.t1'}, interval '${step} minutes') ts`;
  const series = (alias: string) =>
    `JOIN ${span} sp ON sp.site_id = ${alias}.site_id,
     LATERAL (${tier('sp.t0', 'sp.mid', DEMO_OLD_STEP_MINUTES)}
              UNION ALL ${tier('greatest(sp.t0, sp.mid)', '$2::timestamptz', DEMO_COARSE_STEP_MINUTES)}
              UNION ALL ${tier('greatest(sp.t0, $2::timestamptz)', null, DEMO_STEP_MINUTES)}) g0,
     LATERAL (SELECT g0.ts, g0.step, date_part('epoch', g0.ts) AS e) g`;
  const day = `(2 * pi() * g.e / 86400)`; // phase of the day, in radians
  const noise = (id: string, amp: number) => `(${amp} * sin(g.e / 97.0 + ${id}) * cos(g.e / 31.0))`;
  const r = (expr: string, digits: number) =>
    `round((${expr}) * ${10 ** digits}) / ${10 ** digits}`;
  // A pump (alias p): whether it runs, its speed (Hz) and its discharge pressure (psi).
  const pumpOn = (p: string) =>
    `(NOT (${p}.pump_id = $5 AND g.ts > ${min(DEMO_STORY.tripMinutesAgo)})
      AND ((${p}.pump_id = $4 AND g.ts > ${min(180)})
           OR (floor(g.e / 7200)::bigint + ${p}.pump_id * 7) % 37 <> 0))`;
  const pumpHz = (p: string) =>
    `CASE WHEN NOT ${pumpOn(p)} THEN 0 WHEN ${p}.is_vfd THEN ${r(`50 + 6 * sin(${day} + ${p}.pump_id)`, 1)} ELSE 60 END`;
  const surge = (p: string) =>
    `CASE WHEN ${p}.pump_id = $4 AND g.ts > ${min(DEMO_STORY.surgeMinutes)}
       THEN ${DEMO_STORY.surgePsi} * (1 - date_part('epoch', $1::timestamptz - g.ts) / ${DEMO_STORY.surgeMinutes * 60}) ELSE 0 END`;
  const pumpPsi = (p: string) =>
    `CASE WHEN ${pumpOn(p)} THEN ${r(`860 + 50 * sin(${day} + ${p}.pump_id) + ${noise(`${p}.pump_id`, 8)} + ${surge(p)}`, 1)}
          ELSE ${r(`45 + ${noise(`${p}.pump_id`, 2)}`, 1)} END`;
  // A meter's flow (bbl/d) follows its pump (the one of its rank at its site), pump-less ones run on.
  const meterRate = `CASE WHEN p.pump_id IS NULL THEN ${r(`7200 + ${noise('m.meter_id', 300)}`, 1)}
                          WHEN NOT ${pumpOn('p')} THEN 0
                          ELSE ${r(`8400 * (CASE WHEN p.is_vfd THEN ${pumpHz('p')} ELSE 55 END) / 55 + ${noise('m.meter_id', 250)}`, 1)} END`;
  const meterPsi = (m: string) =>
    `${r(`120 + 12 * sin(${day} + ${m}.meter_id) + ${noise(`${m}.meter_id`, 3)}`, 1)}`;
  const ranked = (table: string, id: string) =>
    `(SELECT *, row_number() OVER (PARTITION BY site_id ORDER BY ${id}) AS rk FROM ${table})`;
  // A tank group's volume (bbl) and levels (ft, in proportion to its capacity at its maximum height).
  // Its haul-offs are the tickets whose note names it (src/provisioning/demo-tickets.ts): ticket k
  // leaves HAUL.left(k) bbl in the tank, and between tickets the tank fills with the inflow of the
  // site's meter of its rank (the flow that meter logs; a constant flow without one), so that it holds
  // exactly what ticket k+1 then takes off on top of what that one leaves. As when a tank is gauged
  // for a run ticket, its inlet is shut from the last sample before a ticket to the first after it:
  // across the ticket the samples drop by the ticket's volume.
  const tank = `WITH tk AS (
      SELECT t.tank_group_id AS id, x.transaction_date AS at, x.volume AS v,
             row_number() OVER (PARTITION BY t.tank_group_id ORDER BY x.transaction_date, x.transaction_id) AS k
        FROM transactions x JOIN tank_groups t ON t.site_id = x.site_id AND x.notes = '${HAULED_FROM}' || t.name
       WHERE x.volume > 0),
    s0 AS (
      SELECT t.tank_group_id AS id, t.capacity, t.maximum_height_level AS hmax, g.ts, x.rate
        FROM ${ranked('tank_groups', 'tank_group_id')} t
        LEFT JOIN ${ranked('flow_meters', 'meter_id')} m ON m.site_id = t.site_id AND m.rk = t.rk
        LEFT JOIN ${ranked('pumps', 'pump_id')} p ON p.site_id = m.site_id AND p.rk = m.rk
        ${series('t')},
        LATERAL (SELECT CASE WHEN m.meter_id IS NULL THEN 7200 ELSE ${meterRate} END AS rate) x),
    -- k: the tickets of the group at or before the sample (samples and tickets in one time order).
    s1 AS (
      SELECT id, ts, capacity, hmax, rate, ticket,
             count(*) FILTER (WHERE ticket) OVER (PARTITION BY id ORDER BY ts, ticket DESC) AS k
        FROM (SELECT id, ts, capacity, hmax, rate, false AS ticket FROM s0
              UNION ALL SELECT id, at, NULL, NULL, NULL, true FROM tk) ev),
    -- Each sample's inflow since the one before; none where a ticket came between (the inlet shut).
    s2 AS (
      SELECT id, ts, capacity, hmax, k,
             CASE WHEN k > lag(k, 1, k) OVER w THEN 0
                  ELSE rate * date_part('epoch', ts - lag(ts, 1, ts) OVER w) / 86400 END AS inflow
        FROM s1 WHERE NOT ticket WINDOW w AS (PARTITION BY id ORDER BY ts)),
    -- e: the inflow so far.
    s3 AS (SELECT *, sum(inflow) OVER (PARTITION BY id ORDER BY ts) AS e FROM s2),
    -- Each stretch k (after ticket k, before ticket k+1): its inflow at its start and at its end, and
    -- the share of it the tank receives (the last stretch, whose end is not yet, the one before's).
    st0 AS (
      SELECT id, k, min(capacity) AS capacity, min(e) AS e0, lead(min(e)) OVER (PARTITION BY id ORDER BY k) AS e1
        FROM s3 GROUP BY id, k),
    st1 AS (
      SELECT s.*, CASE WHEN s.e1 > s.e0 THEN (${HAUL.left('s', 's.k + 1')} + nx.v - ${HAUL.left('s', 's.k')}) / (s.e1 - s.e0) END AS share
        FROM st0 s LEFT JOIN tk nx ON nx.id = s.id AND nx.k = s.k + 1),
    st AS (SELECT id, k, e0, coalesce(share, lag(share) OVER (PARTITION BY id ORDER BY k), 0) AS share FROM st1),
    lv AS (
      SELECT s.id, s.ts, s.capacity, s.hmax, ${HAUL.left('s', 's.k')} + st.share * (s.e - st.e0) AS volume
        FROM s3 s JOIN st ON st.id = s.id AND st.k = s.k)
    SELECT id, ts, volume, volume / capacity * hmax AS level FROM lv`;
  return db.transaction(async (tx) => {
    // Tank logs first: a tank group's level sensor reads what the group logs.
    const statements = [
      `INSERT INTO tank_logs (tank_group_id, ts, entry_tank_level, exit_tank_level, total_volume)
         SELECT id, ts, ${r('level', 2)}, ${r('greatest(level - 0.4, 0)', 2)}, ${r('volume', 1)} FROM (${tank}) l`,
      `INSERT INTO sensor_logs (sensor_id, ts, value)
         SELECT s.sensor_id, g.ts, CASE
             WHEN p.pump_id IS NOT NULL THEN ${pumpPsi('p')}
             WHEN m.meter_id IS NOT NULL THEN ${meterPsi('m')}
             WHEN t.tank_group_id IS NOT NULL THEN (SELECT l.entry_tank_level FROM tank_logs l
                                                     WHERE l.tank_group_id = t.tank_group_id AND l.ts = g.ts)
             ELSE ${r(
               `CASE coalesce(s.site_sensor_type_id, ${TYPE.discharge})
                 WHEN ${TYPE.discharge} THEN 850 + 60 * sin(${day} + s.sensor_id) + ${noise('s.sensor_id', 10)}
                 WHEN ${TYPE.suction} THEN 48 + 6 * sin(${day} + s.sensor_id) + ${noise('s.sensor_id', 1.5)}
                 WHEN ${TYPE.level} THEN 9 + 6 * sin(${day} * 2.5 + s.sensor_id)
                 WHEN ${TYPE.temperature} THEN 72 + 14 * sin(${day} - 1.2) + ${noise('s.sensor_id', 1.5)}
                 WHEN ${TYPE.rate} THEN 8200 + 900 * sin(${day} + 0.4) + ${noise('s.sensor_id', 120)}
                 WHEN ${TYPE.position} THEN 50 + 35 * sin(${day} * 2 + s.sensor_id)
                 WHEN ${TYPE.h2s} THEN CASE WHEN s.sensor_id = $6 AND g.ts >= ${min(DEMO_STORY.h2sSpike[0])}
                                             AND g.ts < ${min(DEMO_STORY.h2sSpike[1])} THEN 11.2
                                        ELSE 2.5 + 1.5 * abs(sin(${day} * 3 + s.sensor_id)) END
                 ELSE 2.5 + 1.5 * abs(sin(${day} * 3 + s.sensor_id)) END`,
               2,
             )} END
           FROM sensors s
           LEFT JOIN pumps p ON s.equipment_type_id = 2 AND p.pump_id = s.equipment_id
           LEFT JOIN flow_meters m ON s.equipment_type_id = 1 AND m.meter_id = s.equipment_id
           LEFT JOIN tank_groups t ON s.equipment_type_id = 3 AND t.tank_group_id = s.equipment_id
           ${series('s')}`,
      `INSERT INTO meter_logs (meter_id, ts, start_ts, total_volume, day_volume, pressure, flow_rate)
         SELECT meter_id, ts, day_start,
                ${r('120000 + (meter_id % 97) * 1000 + sum(volume) OVER (PARTITION BY meter_id ORDER BY ts)', 1)},
                ${r('sum(volume) OVER (PARTITION BY meter_id, day_start ORDER BY ts)', 1)},
                pressure, rate
           FROM (SELECT m.meter_id, g.ts, date_trunc('day', g.ts, sp.tz) AS day_start, ${meterPsi('m')} AS pressure,
                        x.rate, x.rate * g.step / 1440 AS volume
                   FROM ${ranked('flow_meters', 'meter_id')} m
                   LEFT JOIN ${ranked('pumps', 'pump_id')} p ON p.site_id = m.site_id AND p.rk = m.rk
                   ${series('m')}, LATERAL (SELECT ${meterRate} AS rate) x) v`,
      `INSERT INTO pump_logs (pump_id, ts, pressure, running, frequency, status_id, status)
         SELECT p.pump_id, g.ts, ${pumpPsi('p')}, on_, ${pumpHz('p')},
                CASE WHEN on_ THEN 1 ELSE 2 END, CASE WHEN on_ THEN 'Running' ELSE 'Stopped' END
           FROM pumps p ${series('p')}, LATERAL (SELECT ${pumpOn('p')} AS on_) run`,
    ];
    // On the empty tables of a fresh database, building each primary key once after the rows are in
    // is about twice as fast as maintaining it row by row.
    for (const [i, table] of ['tank_logs', 'sensor_logs', 'meter_logs', 'pump_logs'].entries()) {
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
    await tx.query(CURRENT_FROM_LAST_LOG);
    await tx.query(
      `UPDATE sites s SET last_communication = (SELECT max(ts) FROM current_readings c WHERE c.site_id = s.site_id)
        WHERE last_communication IS NULL`,
    );
  });
}

/** Each equipment's current reading: its latest log, as an upload record (interface 2.10). */
const CURRENT_FROM_LAST_LOG = `
INSERT INTO current_readings (equipment_kind, equipment_id, site_id, ts, record)
SELECT 'sensor', s.sensor_id, s.site_id, l.ts, jsonb_build_object('sensorID', s.sensor_id, 'value', l.value, 'timestamp', ${iso('l.ts')})
  FROM sensors s CROSS JOIN LATERAL (SELECT * FROM sensor_logs l WHERE l.sensor_id = s.sensor_id ORDER BY ts DESC LIMIT 1) l
UNION ALL
SELECT 'meter', m.meter_id, m.site_id, l.ts, jsonb_build_object('flowMeterID', m.meter_id, 'timestamp', ${iso('l.ts')},
       'startTimestamp', ${iso('l.start_ts')}, 'totalVolume', l.total_volume, 'dayVolume', l.day_volume, 'pressure', l.pressure, 'flowRate', l.flow_rate)
  FROM flow_meters m CROSS JOIN LATERAL (SELECT * FROM meter_logs l WHERE l.meter_id = m.meter_id ORDER BY ts DESC LIMIT 1) l
UNION ALL
SELECT 'pump', p.pump_id, p.site_id, l.ts, jsonb_build_object('sitePumpID', p.pump_id, 'timestamp', ${iso('l.ts')}, 'pressure', l.pressure,
       'running', l.running, 'frequency', l.frequency, 'statusID', l.status_id, 'status', l.status)
  FROM pumps p CROSS JOIN LATERAL (SELECT * FROM pump_logs l WHERE l.pump_id = p.pump_id ORDER BY ts DESC LIMIT 1) l
UNION ALL
SELECT 'tank', t.tank_group_id, t.site_id, l.ts, jsonb_build_object('siteTankGroupID', t.tank_group_id, 'entryTankLevel', l.entry_tank_level,
       'exitTankLevel', l.exit_tank_level, 'totalVolume', l.total_volume, 'timestamp', ${iso('l.ts')})
  FROM tank_groups t CROSS JOIN LATERAL (SELECT * FROM tank_logs l WHERE l.tank_group_id = t.tank_group_id ORDER BY ts DESC LIMIT 1) l
ON CONFLICT (equipment_kind, equipment_id) DO NOTHING`;
