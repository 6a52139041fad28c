import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { gatherDemoStatistics, seedDemo } from '../../src/provisioning/seed.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { HAULED_FROM } from '../../src/provisioning/demo-tickets.js';
import {
  DEMO_COARSE_STEP_MINUTES,
  DEMO_DAYS,
  DEMO_OLD_STEP_MINUTES,
  DEMO_RECENT_DAYS,
  DEMO_STEP_MINUTES,
  DEMO_STORY,
} from '../../src/telemetry/demo.js';
import { describeEachBackend, openTestDb } from '../helper.js';

const LOGS = [
  ['sensor_logs', 'sensors', 'sensor_id'],
  ['meter_logs', 'flow_meters', 'meter_id'],
  ['pump_logs', 'pumps', 'pump_id'],
  ['tank_logs', 'tank_groups', 'tank_group_id'],
] as const;

describeEachBackend('demo telemetry', (backend) => {
  let db: Database;
  /** The clock before and after seeding: the last sample is on the step the seed began in. */
  const seeded = { from: 0, to: 0 };
  /** On PostgreSQL: a schema beside the service's, with a table of rows never analyzed. */
  const other = `demo_other_${process.pid}`;
  beforeAll(async () => {
    db = await openTestDb(backend);
    if (backend === 'postgres') {
      await db.exec(`DROP SCHEMA IF EXISTS ${other} CASCADE; CREATE SCHEMA ${other}`);
      await db.exec(`CREATE TABLE ${other}.t AS SELECT g AS x FROM generate_series(1, 1000) g`);
    }
    seeded.from = Date.now();
    await seedDemo(db);
    seeded.to = Date.now();
  }, 120_000);
  afterAll(async () => {
    if (backend === 'postgres') await db?.exec(`DROP SCHEMA IF EXISTS ${other} CASCADE`);
    await db?.close();
  });

  const count = async (sql: string, params: unknown[] = []) =>
    Number((await db.query<{ n: string }>(sql, params))[0].n);
  const silentSite = async () =>
    (await db.query<{ id: number }>(`SELECT site_id AS id FROM sites ORDER BY site_id OFFSET 2`))[0]
      .id;

  it('gathers statistics of the tables it loaded when asked (the server: once it answers), once, and of no other schema', async () => {
    const stats = (schema: string, table: string) =>
      count(
        `SELECT count(*) AS n FROM pg_stats WHERE schemaname = ${schema} AND tablename = '${table}'`,
      );
    // Not while seeding (the embedded database has no autovacuum that could gather them meanwhile).
    if (backend === 'pglite') expect(await stats('current_schema()', 'sensor_logs')).toBe(0);
    expect(await gatherDemoStatistics(db)).toBe(true);
    expect(await stats('current_schema()', 'sensor_logs')).toBeGreaterThan(0);
    expect(await stats('current_schema()', 'sensor_rollups')).toBeGreaterThan(0);
    if (backend === 'postgres') expect(await stats(`'${other}'`, 't')).toBe(0);
    // Once: a later start finds nothing left to do.
    expect(await gatherDemoStatistics(db)).toBe(false);
  });

  it(`holds ${DEMO_DAYS} whole days in each site's zone, finer towards now, up to the current step`, async () => {
    const step = DEMO_STEP_MINUTES * 60_000;
    const onStep = (t: number) => Math.floor(t / step) * step;
    const silent = await silentSite();
    for (const [logs, equipment, id] of LOGS) {
      expect(await count(`SELECT count(*) AS n FROM ${equipment}`), equipment).toBeGreaterThan(0);
      const firsts = await db.query<{ site: number; id: number; tz: string }>(
        `SELECT x.site_id AS site, min(x.${id}) AS id, min(s.time_zone) AS tz FROM ${equipment} x
           JOIN sites s USING (site_id) GROUP BY x.site_id ORDER BY 1`,
      );
      for (const f of firsts) {
        // Days counted on the site's calendar, from the first sample to the seed's now (a span of
        // hours is a day longer or shorter across a change of daylight saving time).
        const [s] = await db.query<{ first_local: string; days: number; last: Date }>(
          `SELECT to_char(min(ts) AT TIME ZONE $2, 'HH24:MI') AS first_local,
                  (($3::timestamptz AT TIME ZONE $2)::date - (min(ts) AT TIME ZONE $2)::date) AS days,
                  max(ts) AS last
             FROM ${logs} WHERE ${id} = $1`,
          [f.id, f.tz, new Date(seeded.to).toISOString()],
        );
        // Whole days: the first sample at midnight where the site is, DEMO_DAYS days back.
        expect(s.first_local, `${logs} of site ${f.site}`).toBe('00:00');
        expect(s.days).toBe(DEMO_DAYS);
        const last = new Date(s.last).getTime();
        const behind = f.site === silent ? DEMO_STORY.silentMinutesAgo * 60_000 : 0;
        expect(last).toBeGreaterThanOrEqual(onStep(seeded.from) - behind);
        expect(last).toBeLessThanOrEqual(onStep(seeded.to) - behind);
        // Every 3 hours, every 15 minutes over the last week, every 5 over the last day.
        const gaps = await db.query<{ gap: number; since: Date; until: Date }>(
          `SELECT gap, min(ts) AS since, max(ts) AS until FROM (
             SELECT ts, (date_part('epoch', ts - lag(ts) OVER (ORDER BY ts)) / 60)::int AS gap
               FROM ${logs} WHERE ${id} = $1) g
            WHERE gap IS NOT NULL GROUP BY gap ORDER BY gap DESC`,
          [f.id],
        );
        expect(gaps.map((g) => g.gap)).toEqual([
          DEMO_OLD_STEP_MINUTES,
          DEMO_COARSE_STEP_MINUTES,
          DEMO_STEP_MINUTES,
        ]);
        const ago = (d: Date) => (seeded.to - new Date(d).getTime()) / 86_400_000;
        expect(ago(gaps[0].until)).toBeGreaterThan(DEMO_RECENT_DAYS - 0.2);
        expect(ago(gaps[1].until)).toBeGreaterThan(0.9);
        expect(ago(gaps[2].since)).toBeLessThan(1.1);
      }
    }
    const [nulls] = await db.query(
      `SELECT count(*) AS n FROM sensor_logs WHERE value IS NULL OR value = 'NaN'`,
    );
    expect(Number(nulls.n)).toBe(0);
  });

  it("agrees with itself: a pump's state, speed and pressures; a meter's flow and volumes", async () => {
    // Running at a speed with its discharge pressure up, or stopped at 0 Hz near the static head.
    expect(
      await count(
        `SELECT count(*) AS n FROM pump_logs
          WHERE NOT (running AND frequency >= 40 AND pressure > 700 AND status = 'Running')
            AND NOT (NOT running AND frequency = 0 AND pressure < 60 AND status = 'Stopped')`,
      ),
    ).toBe(0);
    const [share] = await db.query<{ running: number }>(
      `SELECT avg(running::int)::float8 AS running FROM pump_logs`,
    );
    expect(share.running).toBeGreaterThan(0.9);
    expect(share.running).toBeLessThan(1);
    // The sensor reporting a pump's discharge pressure reads what the pump logs.
    const linked = `FROM sensors s JOIN sensor_logs l ON l.sensor_id = s.sensor_id
                    JOIN pump_logs p ON p.pump_id = s.equipment_id AND p.ts = l.ts WHERE s.equipment_type_id = 2`;
    expect(await count(`SELECT count(*) AS n ${linked}`)).toBeGreaterThan(0);
    expect(await count(`SELECT count(*) AS n ${linked} AND l.value <> p.pressure`)).toBe(0);
    // A meter flows exactly while its pump (the one of its rank at its site) runs.
    const paired = `FROM (SELECT *, row_number() OVER (PARTITION BY site_id ORDER BY meter_id) rk FROM flow_meters) m
                    JOIN (SELECT *, row_number() OVER (PARTITION BY site_id ORDER BY pump_id) rk FROM pumps) p USING (site_id, rk)
                    JOIN meter_logs ml ON ml.meter_id = m.meter_id JOIN pump_logs pl ON pl.pump_id = p.pump_id AND pl.ts = ml.ts`;
    expect(await count(`SELECT count(*) AS n ${paired} WHERE pl.running`)).toBeGreaterThan(0);
    expect(await count(`SELECT count(*) AS n ${paired} WHERE NOT pl.running`)).toBeGreaterThan(0);
    expect(
      await count(
        `SELECT count(*) AS n ${paired} WHERE (pl.running AND ml.flow_rate < 5000) OR (NOT pl.running AND ml.flow_rate <> 0)`,
      ),
    ).toBe(0);
    // Volumes add up the flow: the total never falls, the day's volume starts again at local midnight.
    expect(
      await count(
        `SELECT count(*) AS n FROM (SELECT total_volume - lag(total_volume) OVER w AS d, day_volume, lag(day_volume) OVER w AS prev,
                start_ts, lag(start_ts) OVER w AS prev_start FROM meter_logs WINDOW w AS (PARTITION BY meter_id ORDER BY ts)) x
          WHERE d < 0 OR (start_ts = prev_start AND day_volume < prev)`,
      ),
    ).toBe(0);
    expect(
      await count(
        `SELECT count(*) AS n FROM meter_logs l JOIN flow_meters m USING (meter_id) JOIN sites s USING (site_id)
          WHERE to_char(l.start_ts AT TIME ZONE s.time_zone, 'HH24:MI') <> '00:00' OR l.start_ts > l.ts`,
      ),
    ).toBe(0);
  });

  it("lowers a tank group's level by each haul-off ticket's volume at its time, and fills it between them as its meter flows", async () => {
    // Every ticket names the tank group it hauled off from; every tank group has tickets.
    const tickets = `SELECT t.tank_group_id AS id, t.capacity, t.maximum_height_level AS hmax, x.transaction_date AS at, x.volume
                       FROM transactions x JOIN tank_groups t ON t.site_id = x.site_id AND x.notes = $1 || t.name`;
    expect(await count(`SELECT count(*) AS n FROM (${tickets}) k`, [HAULED_FROM])).toBe(
      await count(`SELECT count(*) AS n FROM transactions`),
    );
    expect(await count(`SELECT count(DISTINCT id) AS n FROM (${tickets}) k`, [HAULED_FROM])).toBe(
      await count(`SELECT count(*) AS n FROM tank_groups`),
    );
    // Across each ticket (its last sample before, its first at or after it), the volume drops by the
    // ticket's, and the level by as many feet of the group's capacity at its maximum height.
    const across = await db.query<{
      volume: number;
      dropped: number;
      feet: number;
      fell: number;
    }>(
      `SELECT k.volume, b.total_volume - a.total_volume AS dropped,
              k.volume / k.capacity * k.hmax AS feet, b.entry_tank_level - a.entry_tank_level AS fell
         FROM (${tickets}) k
        CROSS JOIN LATERAL (SELECT * FROM tank_logs l WHERE l.tank_group_id = k.id AND l.ts < k.at ORDER BY ts DESC LIMIT 1) b
        CROSS JOIN LATERAL (SELECT * FROM tank_logs l WHERE l.tank_group_id = k.id AND l.ts >= k.at ORDER BY ts LIMIT 1) a`,
      [HAULED_FROM],
    );
    // All but the latest few (after the last sample of their group, or of the silent site).
    expect(across.length).toBeGreaterThan(
      (await count(`SELECT count(*) AS n FROM transactions`)) - 10,
    );
    for (const t of across) {
      expect(Math.abs(t.dropped - t.volume), JSON.stringify(t)).toBeLessThanOrEqual(0.1 + 1e-9);
      expect(Math.abs(t.fell - t.feet), JSON.stringify(t)).toBeLessThanOrEqual(0.01 + 1e-9);
    }
    // Between tickets the volume never falls, and it rises only while the group's meter (the site's of
    // its rank) flows; the level stays between the group's minimum and maximum height.
    const steps = `SELECT l.tank_group_id AS id, l.ts, lag(l.ts) OVER w AS prev, l.total_volume - lag(l.total_volume) OVER w AS d
                     FROM tank_logs l WINDOW w AS (PARTITION BY l.tank_group_id ORDER BY l.ts)`;
    const noTicket = `NOT EXISTS (SELECT 1 FROM (${tickets}) k WHERE k.id = x.id AND k.at > x.prev AND k.at <= x.ts)`;
    expect(
      await count(`SELECT count(*) AS n FROM (${steps}) x WHERE x.d < 0 AND ${noTicket}`, [
        HAULED_FROM,
      ]),
    ).toBe(0);
    const rose = `FROM (${steps}) x
        JOIN (SELECT *, row_number() OVER (PARTITION BY site_id ORDER BY tank_group_id) rk FROM tank_groups) t ON t.tank_group_id = x.id
        JOIN (SELECT *, row_number() OVER (PARTITION BY site_id ORDER BY meter_id) rk FROM flow_meters) m USING (site_id, rk)
        JOIN meter_logs ml ON ml.meter_id = m.meter_id AND ml.ts = x.ts
       WHERE x.d > 0.1 AND ${noTicket}`;
    expect(await count(`SELECT count(*) AS n ${rose}`, [HAULED_FROM])).toBeGreaterThan(0);
    expect(await count(`SELECT count(*) AS n ${rose} AND ml.flow_rate = 0`, [HAULED_FROM])).toBe(0);
    expect(
      await count(
        `SELECT count(*) AS n FROM tank_logs l JOIN tank_groups t USING (tank_group_id)
          WHERE l.entry_tank_level NOT BETWEEN t.minimum_height_level AND t.maximum_height_level`,
      ),
    ).toBe(0);
    // The group's level sensor reads what the group logs.
    expect(
      await count(
        `SELECT count(*) AS n FROM sensors s JOIN sensor_logs sl USING (sensor_id)
           JOIN tank_logs l ON l.tank_group_id = s.equipment_id AND l.ts = sl.ts
          WHERE s.equipment_type_id = 3 AND sl.value <> l.entry_tank_level`,
      ),
    ).toBe(0);
  });

  it('gives every value a unit that fits it: valve positions in %, levels in ft', async () => {
    expect(await count(`SELECT count(*) AS n FROM sensors WHERE coalesce(units, '') = ''`)).toBe(0);
    const valves = await db.query<{ units: string; lo: number; hi: number }>(
      `SELECT s.units, min(l.value) AS lo, max(l.value) AS hi FROM sensors s JOIN sensor_logs l USING (sensor_id)
        WHERE s.equipment_type_id = 4 GROUP BY s.units`,
    );
    expect(valves).toHaveLength(1);
    expect(valves[0].units).toBe('%');
    expect(valves[0].lo).toBeGreaterThanOrEqual(0);
    expect(valves[0].hi).toBeLessThanOrEqual(100);
    // Every unit the sensors carry, per kind of sensor, with a plausible range.
    const ranges = await db.query<{ units: string; lo: number; hi: number }>(
      `SELECT s.units, min(l.value) AS lo, max(l.value) AS hi FROM sensors s JOIN sensor_logs l USING (sensor_id)
        WHERE s.equipment_type_id IS DISTINCT FROM 4 GROUP BY s.units ORDER BY 1`,
    );
    const within: Record<string, [number, number]> = {
      'bbl/d': [0, 20_000],
      degF: [30, 130],
      ft: [0, 20],
      ppm: [0, 20],
      psi: [0, 1500],
    };
    for (const r of ranges) {
      expect(Object.keys(within), r.units).toContain(r.units);
      expect(r.lo, r.units).toBeGreaterThanOrEqual(within[r.units][0]);
      expect(r.hi, r.units).toBeLessThanOrEqual(within[r.units][1]);
    }
    // Meters and pumps carry theirs in the configuration; a tank group's levels and volume in the
    // registers of its roles.
    expect(
      await count(
        `SELECT count(*) AS n FROM flow_meters WHERE flow_units IS NULL OR volume_units IS NULL`,
      ),
    ).toBe(0);
    const tankUnits = await db.query<{ role: string; units: string | null }>(
      `SELECT DISTINCT r.role, g.units FROM equipment_register_roles r JOIN registers g USING (register_id)
        WHERE r.equipment_kind = 'tank' ORDER BY 1`,
    );
    expect(tankUnits).toEqual([
      { role: 'EntryLevel', units: 'ft' },
      { role: 'ExitLevel', units: 'ft' },
      { role: 'Volume', units: 'bbl' },
    ]);
  });

  it('gives every piece of equipment its latest log as its current reading, and every site a LastCommunication', async () => {
    const equipment = await count(
      `SELECT (SELECT count(*) FROM sensors) + (SELECT count(*) FROM flow_meters) + (SELECT count(*) FROM pumps) + (SELECT count(*) FROM tank_groups) AS n`,
    );
    expect(await count(`SELECT count(*) AS n FROM current_readings`)).toBe(equipment);
    for (const [logs, , id] of LOGS) {
      const kind = {
        sensor_logs: 'sensor',
        meter_logs: 'meter',
        pump_logs: 'pump',
        tank_logs: 'tank',
      }[logs];
      expect(
        await count(
          `SELECT count(*) AS n FROM current_readings c
            WHERE c.equipment_kind = $1 AND c.ts <> (SELECT max(ts) FROM ${logs} l WHERE l.${id} = c.equipment_id)`,
          [kind],
        ),
        logs,
      ).toBe(0);
    }
    const [pump] = await db.query<{ record: Record<string, unknown> }>(
      `SELECT record FROM current_readings WHERE equipment_kind = 'pump' LIMIT 1`,
    );
    expect(Object.keys(pump.record).sort()).toEqual([
      'frequency',
      'pressure',
      'running',
      'sitePumpID',
      'status',
      'statusID',
      'timestamp',
    ]);
    expect(pump.record.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d[05]:00\.000Z$/);
    expect(
      await count(
        `SELECT count(*) AS n FROM sites s WHERE last_communication IS DISTINCT FROM (SELECT max(ts) FROM current_readings c WHERE c.site_id = s.site_id)`,
      ),
    ).toBe(0);
  });

  it('raises no alarm the history contradicts: none about pressure on a stopped pump', async () => {
    const open = await db.query<{ alarm_type: string; running: boolean }>(
      `SELECT a.alarm_type, (c.record->>'running')::boolean AS running FROM site_alarms a
         JOIN current_readings c ON c.equipment_kind = 'pump' AND c.equipment_id = a.equipment_id
        WHERE a.resolved_at IS NULL AND a.equipment_type_id = 2`,
    );
    expect(open.length).toBeGreaterThan(0);
    for (const a of open)
      if (/pressure/i.test(a.alarm_type)) expect(a.running, a.alarm_type).toBe(true);
      else expect(a.alarm_type).toBe('PumpTrip');
    expect(open.find((a) => a.alarm_type === 'PumpTrip')?.running).toBe(false);
  });
});

it('draws ticket photos and motion frames larger than the console thumbnails (120×90), still small files', () => {
  const doc = generateDemo({ sites: 1, transactionsPerSite: 3, imagesPerSite: 2 });
  expect(doc.images.length).toBe(4);
  for (const image of doc.images) {
    const png = Buffer.from(image.DataBase64!, 'base64');
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    expect(width, image.Kind).toBeGreaterThan(2 * 120);
    expect(height, image.Kind).toBeGreaterThan(2 * 90);
    expect(png.length, image.Kind).toBeLessThan(50_000);
  }
});
