import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JsonTopics } from '../../src/mqtt/json.js';
import { until } from '../wait.js';
import { describeMqtt, gateway, mqttSuite, request } from './fixtures.js';

// JSON topics (contract 14): a message is an upload of the topic's site, answered on its MQTT 5
// response topic with the UploadResponseDto or the error body, acknowledged after the commit.

const SENSOR = 10100; // site 1 (test/telemetry/fixtures.ts)
const PUMP = 10401;
const SITE2_SENSOR = 20100;
const T0 = Date.UTC(2026, 0, 5, 10);
const at = (m: number) => new Date(T0 + m * 60_000).toISOString();

describeMqtt('MQTT JSON topics', (backend) => {
  const t = mqttSuite(backend);
  let gw: MqttClient;
  const topic = (site: number | string, rest: string) =>
    `${t.prefix}site-monitor/v1/sites/${site}/${rest}`;
  beforeAll(async () => {
    gw = await gateway();
  });
  afterAll(async () => gw?.endAsync());

  const sensorRows = (id: number) =>
    t.ctx.db.query<{ value: number }>(
      `SELECT value FROM sensor_logs WHERE sensor_id = $1 AND ts >= $2 ORDER BY ts`,
      [id, new Date(T0).toISOString()],
    );

  it('stores a batch of logs once, answers the counts, and a replay is all duplicates', async () => {
    const batch = [0, 1, 2].map((i) => ({ sensorID: SENSOR, value: i + 0.5, timestamp: at(i) }));
    const body = JSON.stringify(batch);
    expect(await request(gw, topic(1, 'logs/sensor'), body)).toEqual({
      received: 3,
      stored: 3,
      duplicates: 0,
    });
    expect((await sensorRows(SENSOR)).map((r) => r.value)).toEqual([0.5, 1.5, 2.5]);
    expect(await request(gw, topic(1, 'logs/sensor'), body)).toEqual({
      received: 3,
      stored: 0,
      duplicates: 3,
    });
  });

  it('stores readings as the current value', async () => {
    const readings = [{ sitePumpID: PUMP, running: true, pressure: 3.5, timestamp: at(30) }];
    expect(await request(gw, topic(1, 'readings/pump'), JSON.stringify({ readings }))).toEqual({
      received: 1,
      stored: 1,
      duplicates: 0,
    });
    const [row] = await t.ctx.db.query<{ record: Record<string, unknown> }>(
      `SELECT record FROM current_readings WHERE equipment_kind = 'pump' AND equipment_id = $1`,
      [PUMP],
    );
    expect(row.record).toMatchObject({ sitePumpID: PUMP, running: true, pressure: 3.5 });
  });

  it('refuses equipment of another site (403), unknown equipment (404) and bad records (400), storing nothing', async () => {
    const mixed = [
      { sensorID: SENSOR, value: 7, timestamp: at(40) },
      { sensorID: SITE2_SENSOR, value: 7, timestamp: at(40) },
    ];
    expect(await request(gw, topic(1, 'logs/sensor'), JSON.stringify(mixed))).toMatchObject({
      statusCode: 403,
      error: 'Forbidden',
    });
    const unknown = [{ sensorID: 999_999, value: 1, timestamp: at(41) }];
    expect(await request(gw, topic(1, 'logs/sensor'), JSON.stringify(unknown))).toMatchObject({
      statusCode: 404,
      details: [{ path: '/0/sensorID' }],
    });
    const invalid = [
      { sensorID: SENSOR, value: 1, timestamp: at(42) },
      { sensorID: SENSOR, timestamp: at(43) },
    ];
    expect(await request(gw, topic(1, 'logs/sensor'), JSON.stringify(invalid))).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      details: [{ path: '/1/value' }],
    });
    expect(await request(gw, topic(1, 'logs/sensor'), '{not json')).toMatchObject({
      statusCode: 400,
    });
    expect(
      await request(
        gw,
        topic(1, 'logs/sensor'),
        '[{"sensorID":10100,"value":1,"timestamp":"2026-01-05T10:44:00Z","x":"\\u0000"}]',
      ),
    ).toMatchObject({
      statusCode: 400,
    });
    // Equipment exists on site 2, the topic says site 1: the topic's site is the authority.
    expect(
      await request(
        gw,
        topic(2, 'logs/sensor'),
        JSON.stringify([{ sensorID: SENSOR, value: 1, timestamp: at(45) }]),
      ),
    ).toMatchObject({ statusCode: 403 });
    const stored = await t.ctx.db.query(
      `SELECT 1 FROM sensor_logs WHERE sensor_id = ANY($1::int[]) AND ts >= $2`,
      [[SENSOR, SITE2_SENSOR], at(40)],
    );
    expect(stored).toEqual([]);
  });

  it('stores a message without a response topic as well', async () => {
    await gw.publishAsync(
      topic(1, 'logs/sensor'),
      JSON.stringify([{ sensorID: SENSOR, value: 9.25, timestamp: at(50) }]),
      { qos: 1 },
    );
    await until(async () => (await sensorRows(SENSOR)).some((r) => r.value === 9.25), 'the log');
  });

  it('refuses a message over BODY_LIMIT (413) without reading it', async () => {
    const small = new JsonTopics(t.ctx.app.telemetry, { ...t.ctx.app.settings, BODY_LIMIT: 1024 });
    const big = JSON.stringify(
      Array.from({ length: 40 }, (_, i) => ({ sensorID: SENSOR, value: i, timestamp: at(60 + i) })),
    );
    expect(big.length).toBeGreaterThan(1024);
    expect(await small.handle(topic(1, 'logs/sensor'), Buffer.from(big))).toMatchObject({
      result: 'malformed',
      statusCode: 413,
      body: { statusCode: 413, error: 'Payload Too Large' },
    });
  });

  it('shows the broker connection in /health', async () => {
    const res = await t.ctx.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json().mqtt).toEqual({ connected: true, sparkplugHost: true });
  });
});
