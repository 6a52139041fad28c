import { expect, it } from 'vitest';
import { describeEachBackend } from '../helper.js';
import {
  count,
  METER,
  minutesAgo,
  mixed,
  PUMP,
  SENSOR,
  SENSOR_2,
  suiteApp,
  TANK,
} from './fixtures.js';

describeEachBackend('telemetry log upload', (backend) => {
  const t = suiteApp(backend);

  const sensorRows = (id: number) =>
    t.ctx.db.query<{ ts: Date; value: number }>(
      `SELECT ts, value FROM sensor_logs WHERE sensor_id = $1 ORDER BY ts`,
      [id],
    );

  it('stores a sensor log once: a replay is a duplicate, new values for the same key replace the old', async () => {
    const log = { sensorID: SENSOR, value: 1.25, timestamp: '2026-01-05T10:00:00Z' };
    expect(await t.post('logs/sensor', log)).toEqual({
      status: 201,
      body: { received: 1, stored: 1, duplicates: 0 },
    });
    expect(await t.post('logs/sensor', log)).toEqual({
      status: 201,
      body: { received: 1, stored: 0, duplicates: 1 },
    });
    // The same instant written with an offset, and without one (UTC), is the same key.
    expect(
      (await t.post('logs/sensor', { ...log, timestamp: '2026-01-05T11:00:00+01:00' })).body
        .duplicates,
    ).toBe(1);
    expect(
      (await t.post('logs/sensor', { ...log, timestamp: '2026-01-05T10:00:00' })).body.duplicates,
    ).toBe(1);
    expect(await t.post('logs/sensor', { ...log, value: 2.5 })).toEqual({
      status: 201,
      body: { received: 1, stored: 1, duplicates: 0 },
    });
    expect(await sensorRows(SENSOR)).toEqual([
      { ts: new Date('2026-01-05T10:00:00Z'), value: 2.5 },
    ]);
  });

  it('keeps milliseconds exactly, so a replay of a record with them is still a duplicate', async () => {
    const log = { sensorID: SENSOR, value: 3, timestamp: '2026-01-05T10:00:00.123456+00:00' };
    expect((await t.post('logs/sensor', log)).body.stored).toBe(1);
    expect(
      (await t.post('logs/sensor', { ...log, timestamp: '2026-01-05T10:00:00.123Z' })).body
        .duplicates,
    ).toBe(1);
    const [row] = await t.ctx.db.query(
      `SELECT to_char(ts AT TIME ZONE 'UTC', 'HH24:MI:SS.US') AS t FROM sensor_logs WHERE sensor_id = $1 AND value = 3`,
      [SENSOR],
    );
    expect(row.t).toBe('10:00:00.123000');
  });

  it('stores a batch as one set; inside a request the last entry of a key wins and the others count as duplicates', async () => {
    const batch = [
      { sensorID: SENSOR_2, value: 1, timestamp: '2026-02-01T00:00:00Z' },
      { sensorID: SENSOR_2, value: 2, timestamp: '2026-02-01T00:01:00Z' },
      { sensorID: SENSOR_2, value: 3, timestamp: '2026-02-01T00:00:00.000Z' },
    ];
    expect(await t.post('logs/sensor/batch', batch)).toEqual({
      status: 201,
      body: { received: 3, stored: 2, duplicates: 1 },
    });
    expect((await sensorRows(SENSOR_2)).map((r) => r.value)).toEqual([3, 2]);
    expect(await t.post('logs/sensor/batch', batch)).toEqual({
      status: 201,
      body: { received: 3, stored: 0, duplicates: 3 },
    });
    expect(await t.post('logs/sensor/batch', [])).toEqual({
      status: 201,
      body: { received: 0, stored: 0, duplicates: 0 },
    });
  });

  it('stores every field of flow meter, pump and tank group logs, and a meter log with only its total', async () => {
    const ts = '2026-03-01T06:00:00.000Z';
    const meter = {
      flowMeterID: METER,
      timestamp: ts,
      startTimestamp: '2026-03-01T00:00:00-06:00',
      totalVolume: 1500.5,
      dayVolume: 12,
      pressure: 110,
      flowRate: 8000,
    };
    expect((await t.post('logs/meter', meter)).body).toEqual({
      received: 1,
      stored: 1,
      duplicates: 0,
    });
    expect(
      (
        await t.post('logs/meter/batch', [
          { flowMeterID: METER, totalVolume: 1501, timestamp: '2026-03-01T06:01:00Z' },
        ])
      ).body.stored,
    ).toBe(1);
    expect(
      await t.ctx.db.query(`SELECT * FROM meter_logs WHERE meter_id = $1 ORDER BY ts`, [METER]),
    ).toEqual([
      {
        meter_id: METER,
        ts: new Date(ts),
        start_ts: new Date('2026-03-01T06:00:00Z'),
        total_volume: 1500.5,
        day_volume: 12,
        pressure: 110,
        flow_rate: 8000,
      },
      {
        meter_id: METER,
        ts: new Date('2026-03-01T06:01:00Z'),
        start_ts: null,
        total_volume: 1501,
        day_volume: null,
        pressure: null,
        flow_rate: null,
      },
    ]);

    const pump = {
      sitePumpID: PUMP,
      timestamp: ts,
      pressure: 900,
      running: false,
      frequency: 0,
      statusID: 2,
      status: 'Stopped "manual" \\ o\'clock',
    };
    expect((await t.post('logs/pump', pump)).body.stored).toBe(1);
    expect(
      (
        await t.post('logs/pump/batch', [
          { ...pump, timestamp: '2026-03-01T06:01:00Z', running: true, status: null },
        ])
      ).body.stored,
    ).toBe(1);
    expect(
      await t.ctx.db.query(
        `SELECT running, status, status_id, frequency FROM pump_logs WHERE pump_id = $1 ORDER BY ts`,
        [PUMP],
      ),
    ).toEqual([
      { running: false, status: pump.status, status_id: 2, frequency: 0 },
      { running: true, status: null, status_id: 2, frequency: 0 },
    ]);

    const tank = {
      siteTankGroupID: TANK,
      entryTankLevel: 10.5,
      exitTankLevel: 10.1,
      totalVolume: 3000,
      timestamp: ts,
    };
    expect((await t.post('logs/tank', tank)).body.stored).toBe(1);
    expect((await t.post('logs/tank/batch', [tank, { ...tank, totalVolume: 3001 }])).body).toEqual({
      received: 2,
      stored: 1,
      duplicates: 1,
    });
    expect(
      await t.ctx.db.query(
        `SELECT entry_tank_level, exit_tank_level, total_volume FROM tank_logs WHERE tank_group_id = $1`,
        [TANK],
      ),
    ).toEqual([{ entry_tank_level: 10.5, exit_tank_level: 10.1, total_volume: 3001 }]);
  });

  it('routes generic logs by their id field into each kind of log', async () => {
    const ts = '2026-04-01T00:00:00Z';
    const body = [...mixed(ts, 7), { sensorID: SENSOR, value: 7, timestamp: ts }];
    expect(await t.post('logs/generic', body)).toEqual({
      status: 201,
      body: { received: 5, stored: 4, duplicates: 1 },
    });
    for (const [table, column, id] of [
      ['sensor_logs', 'sensor_id', SENSOR],
      ['meter_logs', 'meter_id', METER],
      ['pump_logs', 'pump_id', PUMP],
      ['tank_logs', 'tank_group_id', TANK],
    ] as const)
      expect(await count(t.ctx.db, table, `${column} = $1 AND ts = $2`, [id, ts]), table).toBe(1);
    expect((await t.post('logs/generic', body)).body).toEqual({
      received: 5,
      stored: 0,
      duplicates: 5,
    });
  });

  it('keeps recent logs in their month partition and old backfill in the archive, and ignores unknown properties', async () => {
    const recent = minutesAgo(3);
    expect(
      (
        await t.post('logs/sensor', {
          sensorID: SENSOR,
          value: 1,
          timestamp: recent,
          unit: 'psi',
          sensorId: 5,
        })
      ).body.stored,
    ).toBe(1);
    expect(
      (
        await t.post('logs/sensor', {
          sensorID: SENSOR,
          value: 1,
          timestamp: '2011-06-01T00:00:00Z',
        })
      ).body.stored,
    ).toBe(1);
    const parts = await t.ctx.db.query<{ part: string; ts: Date }>(
      `SELECT tableoid::regclass::text AS part, ts FROM sensor_logs WHERE sensor_id = $1 AND ts IN ($2, '2011-06-01T00:00:00Z') ORDER BY ts`,
      [SENSOR, recent],
    );
    const month = recent.slice(0, 7).replace('-', '_');
    expect(parts.map((p) => p.part.replace(/^.*\./, ''))).toEqual([
      'sensor_logs_archive',
      `sensor_logs_p${month}`,
    ]);
  });

  it('sets the site LastCommunication to the time of the upload, and creates no current reading', async () => {
    await t.ctx.db.query(`UPDATE sites SET last_communication = NULL`);
    const before = Date.now();
    await t.post('logs/sensor', { sensorID: SENSOR, value: 99, timestamp: '2026-01-01T00:00:00Z' });
    const [site] = await t.ctx.db.query<{ t: Date }>(
      `SELECT last_communication AS t FROM sites WHERE site_id = 1`,
    );
    expect(site.t.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(site.t.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    expect(await count(t.ctx.db, 'sites', 'site_id <> 1 AND last_communication IS NOT NULL')).toBe(
      0,
    );
    expect(await count(t.ctx.db, 'current_readings')).toBe(0);
  });
});
