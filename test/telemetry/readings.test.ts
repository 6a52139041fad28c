import { expect, it } from 'vitest';
import { bearer, describeEachBackend } from '../helper.js';
import { count, METER, mixed, PUMP, SENSOR, SENSOR_2, suiteApp, TANK } from './fixtures.js';

describeEachBackend('telemetry live readings', (backend) => {
  const t = suiteApp(backend);

  const current = async (kind: string, id: number) =>
    (
      await t.ctx.db.query<{ record: Record<string, unknown> }>(
        `SELECT record FROM current_readings WHERE equipment_kind = $1 AND equipment_id = $2`,
        [kind, id],
      )
    )[0]?.record;

  it('replaces the current value with a reading unless it is older; an equal one is a duplicate', async () => {
    const r = (value: number, timestamp: string) => ({ sensorID: SENSOR, value, timestamp });
    expect(await t.post('readings/sensor', r(5, '2026-06-01T12:00:00Z'))).toEqual({
      status: 201,
      body: { received: 1, stored: 1, duplicates: 0 },
    });
    expect(await current('sensor', SENSOR)).toEqual({
      sensorID: SENSOR,
      value: 5,
      timestamp: '2026-06-01T12:00:00.000Z',
    });
    expect((await t.post('readings/sensor', r(5, '2026-06-01T14:00:00+02:00'))).body).toEqual({
      received: 1,
      stored: 0,
      duplicates: 1,
    });
    expect((await t.post('readings/sensor', r(4, '2026-06-01T11:59:59Z'))).body).toEqual({
      received: 1,
      stored: 0,
      duplicates: 1,
    });
    expect((await current('sensor', SENSOR)).value).toBe(5);
    expect((await t.post('readings/sensor', r(6, '2026-06-01T12:00:00Z'))).body.stored).toBe(1);
    expect((await t.post('readings/sensor', r(7, '2026-06-01T12:00:01Z'))).body.stored).toBe(1);
    expect(await current('sensor', SENSOR)).toEqual({
      sensorID: SENSOR,
      value: 7,
      timestamp: '2026-06-01T12:00:01.000Z',
    });
    expect(await count(t.ctx.db, 'sensor_logs')).toBe(0);
  });

  it('keeps the newest reading of a batch; the older ones of the same equipment are duplicates', async () => {
    const readings = [
      { sensorID: SENSOR_2, value: 2, timestamp: '2026-06-02T00:02:00Z' },
      { sensorID: SENSOR_2, value: 1, timestamp: '2026-06-02T00:01:00Z' },
      { sensorID: SENSOR_2, value: 3, timestamp: '2026-06-02T00:02:00Z' },
      { sensorID: SENSOR, value: 8, timestamp: '2026-06-02T00:00:00Z' },
    ];
    expect(await t.post('readings/sensor/batch', { readings })).toEqual({
      status: 201,
      body: { received: 4, stored: 2, duplicates: 2 },
    });
    expect((await current('sensor', SENSOR_2)).value).toBe(3);
    expect((await current('sensor', SENSOR)).value).toBe(8);
    expect((await t.post('readings/sensor/batch', { readings })).body).toEqual({
      received: 4,
      stored: 0,
      duplicates: 4,
    });
    expect((await t.post('readings/sensor/batch', { readings: [] })).body).toEqual({
      received: 0,
      stored: 0,
      duplicates: 0,
    });
  });

  it('keeps each record as uploaded: known fields as sent (nulls too), unknown ones dropped, times in UTC', async () => {
    const ts = '2026-06-03T01:00:00-05:00';
    const meter = {
      flowMeterID: METER,
      timestamp: ts,
      startTimestamp: '2026-06-03T00:00',
      totalVolume: 10,
      flowRate: null,
      color: 'red',
    };
    expect((await t.post('readings/meter', meter)).body.stored).toBe(1);
    expect(await current('meter', METER)).toEqual({
      flowMeterID: METER,
      timestamp: '2026-06-03T06:00:00.000Z',
      startTimestamp: '2026-06-03T00:00:00.000Z',
      totalVolume: 10,
      flowRate: null,
    });
    const pump = {
      sitePumpID: PUMP,
      timestamp: ts,
      pressure: 1,
      running: true,
      frequency: 50,
      statusID: 3,
      status: 'Fault "A"',
    };
    expect((await t.post('readings/pump/batch', { readings: [pump] })).body.stored).toBe(1);
    expect(await current('pump', PUMP)).toEqual({ ...pump, timestamp: '2026-06-03T06:00:00.000Z' });
    const tank = {
      siteTankGroupID: TANK,
      entryTankLevel: 1,
      exitTankLevel: 2,
      totalVolume: 3,
      timestamp: ts,
    };
    expect((await t.post('readings/tank', tank)).body.stored).toBe(1);
    expect(await current('tank', TANK)).toEqual({ ...tank, timestamp: '2026-06-03T06:00:00.000Z' });
    for (const table of ['meter_logs', 'pump_logs', 'tank_logs'])
      expect(await count(t.ctx.db, table), table).toBe(0);
  });

  it('routes generic readings by their id field', async () => {
    const ts = '2026-06-04T00:00:00Z';
    const readings = mixed(ts, 11);
    expect(await t.post('readings/generic', { readings })).toEqual({
      status: 201,
      body: { received: 4, stored: 4, duplicates: 0 },
    });
    expect((await current('sensor', SENSOR)).value).toBe(11);
    expect((await current('meter', METER)).totalVolume).toBe(12);
    expect((await current('pump', PUMP)).running).toBe(false);
    expect((await current('tank', TANK)).entryTankLevel).toBe(13);
  });

  it('shows the readings and the time of the last upload in the sites list (dataType=additional)', async () => {
    const before = Date.now();
    await t.post('readings/sensor', {
      sensorID: SENSOR,
      value: 42,
      timestamp: '2026-06-05T00:00:00Z',
    });
    const res = await t.ctx.app.inject({
      method: 'GET',
      url: '/v1/sites?page=1&perPage=10&dataType=additional',
      headers: bearer(t.token),
    });
    expect(res.statusCode).toBe(200);
    const site = res.json().data.find((s: { SiteID: number }) => s.SiteID === 1);
    expect(site.Current.sensors).toContainEqual({
      sensorID: SENSOR,
      value: 42,
      timestamp: '2026-06-05T00:00:00.000Z',
    });
    expect(site.Current.meters).toEqual([
      { flowMeterID: METER, totalVolume: 12, timestamp: '2026-06-04T00:00:00.000Z' },
    ]);
    expect(site.Current.pumps).toHaveLength(1);
    expect(site.Current.tankGroups).toHaveLength(1);
    expect(new Date(site.LastCommunication).getTime()).toBeGreaterThanOrEqual(before - 1000);
    const other = res.json().data.find((s: { SiteID: number }) => s.SiteID === 2);
    expect(other).toMatchObject({
      LastCommunication: null,
      Current: { sensors: [], meters: [], pumps: [], tankGroups: [] },
    });
  });
});
