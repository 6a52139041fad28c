import { expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { refreshAll } from '../../src/telemetry/rollups/refresh.js';
import { listQuarantined, type QuarantinedLog } from '../../src/telemetry/quarantine.js';
import { describeEachBackend } from '../helper.js';
import { count, METER, SENSOR, suiteApp } from './fixtures.js';
import { sensorLogs, sensorSummary, storeLogs, summaryLoader } from './download-fixtures.js';

// Values beyond 1e15 stored before uploads refused them (here written straight into the logs, as an
// older version took them): the migration moves their rows out of the logs into quarantined_logs,
// removes the rollups of their days and marks the quarters that still hold logs, so the refresher
// rebuilds them and every summary answers, exactly, over what remains.

describeEachBackend('quarantine of values beyond 1e15', (backend) => {
  const t = suiteApp(backend, { ROLLUP_REFRESH_MS: 0 });

  it('moves them out of the logs, lists them, and summaries answer over the rest', async () => {
    const day = '2026-01-07';
    const kept: [string, number][] = [
      [`${day}T01:00:00Z`, 2.5],
      [`${day}T05:30:00Z`, -4],
      [`${day}T23:59:00Z`, 10],
    ];
    await storeLogs(t.ctx, t.token, 'sensor', sensorLogs(SENSOR, kept));
    await storeLogs(t.ctx, t.token, 'meter', [
      { flowMeterID: METER, timestamp: `${day}T02:00:00Z`, flowRate: 3, totalVolume: 100 },
    ]);
    await refreshAll(t.ctx.db);
    const { db } = t.ctx;
    // What an older version stored: two values whose sum overflows, in a quarter of their own and in
    // a quarter with a kept value, and a meter's flow rate; their rollups as the refresher made them.
    await db.query(
      `INSERT INTO sensor_logs (sensor_id, ts, value) VALUES
         ($1, '${day}T03:00:00Z', 1e308), ($1, '${day}T03:01:00Z', 1e308), ($1, '${day}T05:31:00Z', -2e15)`,
      [SENSOR],
    );
    await db.query(
      `INSERT INTO meter_logs (meter_id, ts, flow_rate) VALUES ($1, '${day}T02:01:00Z', -1e308)`,
      [METER],
    );
    await db.query(
      `UPDATE sensor_rollups SET v_max = 1e308 WHERE sensor_id = $1 AND level = 1440`,
      [SENSOR],
    );

    // The migration as a database made before it meets it.
    await db.query(`DELETE FROM schema_migrations WHERE version = 11`);
    await db.query(`DROP TABLE quarantined_logs`);
    expect(await migrate(db)).toEqual(['011_quarantine.sql']);

    expect(await count(db, 'sensor_logs', 'abs(value) > 1e15')).toBe(0);
    expect(await count(db, 'meter_logs', 'abs(flow_rate) > 1e15')).toBe(0);
    expect(await count(db, 'sensor_logs', 'sensor_id = $1', [SENSOR])).toBe(3);
    const listed: QuarantinedLog[] = [];
    expect(await listQuarantined(db, (rows) => listed.push(...rows))).toBe(4);
    expect(listed.map((r) => [r.kind, r.equipmentId, r.timestamp])).toEqual([
      ['meter', METER, `${day}T02:01:00.000Z`],
      ['sensor', SENSOR, `${day}T03:00:00.000Z`],
      ['sensor', SENSOR, `${day}T03:01:00.000Z`],
      ['sensor', SENSOR, `${day}T05:31:00.000Z`],
    ]);
    expect(listed[0].record).toMatchObject({ meter_id: METER, flow_rate: -1e308 });
    expect(listed[3].record).toMatchObject({ sensor_id: SENSOR, value: -2e15 });
    // Past a page (1,000 rows), the listing goes on after the last key, in order, nothing twice.
    await db.query(
      `INSERT INTO quarantined_logs (kind, equipment_id, ts, record)
         SELECT 'tank', 7, TIMESTAMPTZ '2025-01-01T00:00:00Z' + n * interval '1 minute', '{}'
           FROM generate_series(1, 1500) n`,
    );
    const pages: QuarantinedLog[][] = [];
    expect(await listQuarantined(db, (rows) => pages.push(rows))).toBe(1504);
    expect(pages.map((rows) => rows.length)).toEqual([1000, 504]);
    const keys = pages.flat().map((r) => `${r.kind} ${r.equipmentId} ${r.timestamp}`);
    expect(new Set(keys).size).toBe(1504);
    expect(keys).toEqual([...keys].sort());
    await db.query(`DELETE FROM quarantined_logs WHERE kind = 'tank'`);

    // The day's quarters that still hold logs are marked; read now (from the logs) and once rebuilt.
    expect(await count(db, 'rollup_dirty')).toBe(4);
    const load = summaryLoader(t.ctx, t.token);
    const daily = () =>
      load('sensor', [SENSOR], `${day}T00:00:00Z`, '2026-01-08T00:00:00Z', { interval: '1d' });
    const expected = [
      sensorSummary(
        SENSOR,
        `${day}T00:00:00Z`,
        '2026-01-08T00:00:00Z',
        kept.map(([, v]) => v),
      ),
    ];
    expect(await daily()).toMatchObject(expected);
    await refreshAll(db);
    expect(await count(db, 'rollup_dirty')).toBe(0);
    expect(await daily()).toMatchObject(expected);
    const meter = await load('meter', [METER], `${day}T00:00:00Z`, '2026-01-08T00:00:00Z', {
      interval: '1d',
    });
    expect(meter[0]).toMatchObject({ count: 1 });
  });
});
