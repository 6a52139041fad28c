import { beforeAll, expect, it } from 'vitest';
import { describeEachBackend } from '../helper.js';
import { KINDS, minutesAgo, PUMP, SENSOR, snapshot, suiteApp, VALID } from './fixtures.js';

const MAX_BATCH = 20;

describeEachBackend('telemetry upload validation', (backend) => {
  const t = suiteApp(backend, { MAX_BATCH, BODY_LIMIT: 64 * 1024 });
  let empty: Awaited<ReturnType<typeof snapshot>>;
  beforeAll(async () => {
    empty = await snapshot(t.ctx.db);
  });

  /** A 400 in the contract's error body whose first detail names `path`; nothing stored. */
  const rejects = async (url: string, body: unknown, path: string) => {
    const res = await t.post(url, body);
    expect(res.status, `${url} ${JSON.stringify(body).slice(0, 120)}`).toBe(400);
    expect(res.body).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      message: expect.any(String),
    });
    expect(res.body.details?.[0]?.path, JSON.stringify(res.body)).toBe(path);
    expect(await snapshot(t.ctx.db)).toEqual(empty);
  };

  const ts = '2026-01-05T10:00:00Z';

  it('rejects a single record with a missing, mistyped or impossible field, naming the field', async () => {
    await rejects('logs/sensor', { sensorID: SENSOR, timestamp: ts }, '/value');
    await rejects('logs/sensor', { sensorID: SENSOR, value: 1 }, '/timestamp');
    await rejects('logs/sensor', { value: 1, timestamp: ts }, '/sensorID');
    await rejects('logs/sensor', { sensorID: SENSOR, value: '12', timestamp: ts }, '/value');
    await rejects('logs/sensor', { sensorID: SENSOR, value: null, timestamp: ts }, '/value');
    await rejects('logs/sensor', { sensorID: 1.5, value: 1, timestamp: ts }, '/sensorID');
    await rejects(
      'logs/sensor',
      { sensorID: String(SENSOR), value: 1, timestamp: ts },
      '/sensorID',
    );
    await rejects(
      'readings/sensor',
      { sensorID: SENSOR, value: 1, timestamp: 'yesterday' },
      '/timestamp',
    );
    await rejects(
      'readings/sensor',
      { sensorID: SENSOR, value: 1, timestamp: '2026-02-30T00:00:00Z' },
      '/timestamp',
    );
    await rejects(
      'logs/sensor',
      {
        sensorID: SENSOR,
        value: 1,
        timestamp: new Date(Date.now() + 25 * 3_600_000).toISOString(),
      },
      '/timestamp',
    );
    await rejects(
      'logs/sensor',
      { sensorID: SENSOR, value: 1, timestamp: '1969-12-31T23:59:59Z' },
      '/timestamp',
    );
    await rejects(
      'logs/sensor',
      `{"sensorID":${SENSOR},"value":1e999,"timestamp":"${ts}"}`,
      '/value',
    );
    await rejects('logs/pump', { sitePumpID: PUMP, timestamp: ts, running: 'yes' }, '/running');
    await rejects('logs/pump', { sitePumpID: PUMP, timestamp: ts, statusID: 1.5 }, '/statusID');
    await rejects(
      'logs/pump',
      { sitePumpID: PUMP, timestamp: ts, status: 'bad\u0000text' },
      '/status',
    );
    await rejects(
      'logs/meter',
      { flowMeterID: 10301, timestamp: ts, startTimestamp: 'soon' },
      '/startTimestamp',
    );
    await rejects(
      'logs/tank',
      `{"siteTankGroupID":10501,"timestamp":"${ts}","totalVolume":-1e999}`,
      '/totalVolume',
    );
    await rejects('logs/tank', [VALID.tank(ts)], '/');
  });

  it('rejects a measured value beyond 1e15 in absolute value, naming the field, and takes 1e15', async () => {
    // Finite, but its sums overflow a double: taken, it would make every summary over it fail.
    await rejects(
      'logs/meter',
      { flowMeterID: 10301, timestamp: ts, flowRate: 1e308 },
      '/flowRate',
    );
    await rejects(
      'logs/sensor',
      { sensorID: SENSOR, value: -1.000001e15, timestamp: ts },
      '/value',
    );
    await rejects(
      'readings/pump',
      { sitePumpID: PUMP, timestamp: ts, frequency: 2e15 },
      '/frequency',
    );
    const res = await t.post('logs/sensor', { sensorID: SENSOR, value: -1e15, timestamp: ts });
    expect(res.status).toBe(201);
    await t.ctx.db.query(`DELETE FROM sensor_logs`);
    await t.ctx.db.query(`DELETE FROM rollup_dirty`);
    await t.ctx.db.query(`UPDATE sites SET last_communication = NULL`);
  });

  it('accepts a timestamp up to 24 h ahead', async () => {
    const res = await t.post('logs/sensor', {
      sensorID: SENSOR,
      value: 1,
      timestamp: new Date(Date.now() + 23 * 3_600_000).toISOString(),
    });
    expect(res.status).toBe(201);
    await t.ctx.db.query(`DELETE FROM sensor_logs`);
    await t.ctx.db.query(`UPDATE sites SET last_communication = NULL`);
  });

  it('rejects a whole batch for one bad entry, naming its index and field, and stores nothing of it', async () => {
    const good = (m: number) => ({ sensorID: SENSOR, value: m, timestamp: minutesAgo(m) });
    await rejects(
      'logs/sensor/batch',
      [good(1), good(2), good(3), { ...good(4), timestamp: 'not a time' }],
      '/3/timestamp',
    );
    await rejects('logs/sensor/batch', [good(1), { sensorID: SENSOR, timestamp: ts }], '/1/value');
    await rejects('logs/sensor/batch', [good(1), 7], '/1');
    await rejects('logs/sensor/batch', { sensorID: SENSOR, value: 1, timestamp: ts }, '/');
    await rejects(
      'logs/meter/batch',
      [VALID.meter(ts), { ...VALID.meter(ts), pressure: 'high' }],
      '/1/pressure',
    );
    await rejects('logs/pump/batch', 'null', '/');
    await rejects(
      'logs/sensor/batch',
      Array.from({ length: MAX_BATCH + 1 }, (_, i) => good(i)),
      '/',
    );
    expect(
      (
        await t.post(
          'logs/sensor/batch',
          Array.from({ length: MAX_BATCH }, (_, i) => good(i)),
        )
      ).status,
    ).toBe(201);
    await t.ctx.db.query(`DELETE FROM sensor_logs`);
    await t.ctx.db.query(`UPDATE sites SET last_communication = NULL`);
  });

  it('routes generic entries by exactly one id field, and checks each as its kind', async () => {
    await rejects('logs/generic', [VALID.sensor(ts), { value: 1, timestamp: ts }], '/1');
    await rejects('logs/generic', [{ ...VALID.sensor(ts), sitePumpID: PUMP }], '/0');
    await rejects(
      'logs/generic',
      [VALID.pump(ts), { sensorID: SENSOR, timestamp: ts }],
      '/1/value',
    );
    await rejects(
      'logs/generic',
      [VALID.pump(ts), VALID.tank(ts), { ...VALID.meter(ts), timestamp: '2026-13-01T00:00:00Z' }],
      '/2/timestamp',
    );
    await rejects('logs/generic', [VALID.pump(ts), 'sensor'], '/1');
    await rejects('logs/generic', [VALID.pump(ts), null], '/1');
    await rejects('logs/generic', [[VALID.pump(ts)]], '/0');
    await rejects('logs/generic', { readings: [VALID.pump(ts)] }, '/');
    await rejects('logs/generic', [{ ...VALID.pump(ts), sitePumpID: '10401' }], '/0/sitePumpID');
  });

  it('rejects batch and generic readings without a readings array or with a bad entry', async () => {
    for (const kind of KINDS) {
      await rejects(`readings/${kind}/batch`, {}, '/readings');
      await rejects(`readings/${kind}/batch`, { readings: VALID[kind](ts) }, '/readings');
      await rejects(`readings/${kind}/batch`, [VALID[kind](ts)], '/');
      await rejects(
        `readings/${kind}/batch`,
        { readings: [VALID[kind](ts), { ...VALID[kind](ts), timestamp: 5 }] },
        '/readings/1/timestamp',
      );
    }
    await rejects('readings/generic', {}, '/readings');
    await rejects('readings/generic', { readings: 'x' }, '/readings');
    await rejects('readings/generic', { readings: [VALID.sensor(ts), 3] }, '/readings/1');
    await rejects(
      'readings/generic',
      { readings: [VALID.sensor(ts), { timestamp: ts }] },
      '/readings/1',
    );
    await rejects(
      'readings/generic',
      { readings: [VALID.sensor(ts), { ...VALID.tank(ts), exitTankLevel: true }] },
      '/readings/1/exitTankLevel',
    );
    await rejects(
      'readings/sensor/batch',
      { readings: Array.from({ length: MAX_BATCH + 1 }, () => VALID.sensor(ts)) },
      '/readings',
    );
  });

  it('answers 400 to malformed JSON and 413 to a body over the limit', async () => {
    const bad = await t.post('logs/sensor', '{"sensorID": 1,');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    const huge = await t.post(
      'logs/sensor/batch',
      JSON.stringify([{ sensorID: SENSOR, value: 1, timestamp: ts, pad: 'x'.repeat(70 * 1024) }]),
    );
    expect(huge.status).toBe(413);
    expect(huge.body).toMatchObject({ statusCode: 413, error: 'Payload Too Large' });
    expect(await snapshot(t.ctx.db)).toEqual(empty);
  });
});
