import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { seedDemo } from '../../src/provisioning/seed.js';
import { DEMO_SAMPLES, DEMO_STEP_MINUTES } from '../../src/telemetry/demo.js';
import { describeEachBackend, openTestDb } from '../helper.js';

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
  });
  afterAll(async () => {
    if (backend === 'postgres') await db?.exec(`DROP SCHEMA IF EXISTS ${other} CASCADE`);
    await db?.close();
  });

  it('gathers statistics of the tables it loaded, and of no other schema', async () => {
    const stats = (schema: string, table: string) =>
      count(
        `SELECT count(*) AS n FROM pg_stats WHERE schemaname = ${schema} AND tablename = '${table}'`,
      );
    expect(await stats('current_schema()', 'sensor_logs')).toBeGreaterThan(0);
    if (backend === 'postgres') expect(await stats(`'${other}'`, 't')).toBe(0);
  });

  const count = async (sql: string) => Number((await db.query<{ n: string }>(sql))[0].n);

  it('holds a week of five-minute logs for every piece of equipment, up to the current step', async () => {
    expect(DEMO_SAMPLES).toBe(7 * 24 * 12);
    const step = DEMO_STEP_MINUTES * 60_000;
    for (const [logs, equipment] of [
      ['sensor_logs', 'sensors'],
      ['meter_logs', 'flow_meters'],
      ['pump_logs', 'pumps'],
      ['tank_logs', 'tank_groups'],
    ]) {
      const n = await count(`SELECT count(*) AS n FROM ${equipment}`);
      expect(n, equipment).toBeGreaterThan(0);
      expect(await count(`SELECT count(*) AS n FROM ${logs}`), logs).toBe(n * DEMO_SAMPLES);
      const [span] = await db.query<{ a: Date; b: Date; samples: string }>(
        `SELECT min(ts) AS a, max(ts) AS b, count(DISTINCT ts) AS samples FROM ${logs}`,
      );
      expect(Number(span.samples)).toBe(DEMO_SAMPLES);
      const onStep = (t: number) => Math.floor(t / step) * step;
      expect(new Date(span.b).getTime()).toBeGreaterThanOrEqual(onStep(seeded.from));
      expect(new Date(span.b).getTime()).toBeLessThanOrEqual(onStep(seeded.to));
      expect(new Date(span.b).getTime() - new Date(span.a).getTime()).toBe(
        (DEMO_SAMPLES - 1) * step,
      );
    }
    const [meter] = await db.query(`SELECT bool_and(total_volume > 0) AS ok FROM meter_logs`);
    expect(meter.ok).toBe(true);
    const [nulls] = await db.query(
      `SELECT count(*) AS n FROM sensor_logs WHERE value IS NULL OR value = 'NaN'`,
    );
    expect(Number(nulls.n)).toBe(0);
  });

  it('gives every piece of equipment a current reading shaped like an upload record, and every site a LastCommunication', async () => {
    const equipment = await count(
      `SELECT (SELECT count(*) FROM sensors) + (SELECT count(*) FROM flow_meters) + (SELECT count(*) FROM pumps) + (SELECT count(*) FROM tank_groups) AS n`,
    );
    expect(await count(`SELECT count(*) AS n FROM current_readings`)).toBe(equipment);
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
    expect(await count(`SELECT count(*) AS n FROM sites WHERE last_communication IS NULL`)).toBe(0);
  });
});
