import { afterAll, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite.js';
import { serverStore, startServerProcess, waitFor, type Running } from '../operations/process.js';
import { until } from '../wait.js';
import { BROKER, describeMqtt, gateway, unique } from './fixtures.js';

// kill -9 of the real server while a gateway's JSON messages at QoS 1 are in flight: the broker
// keeps every message it accepted in the service's persistent session until the service
// acknowledges it, which it does only after the commit. After a restart (same client id), every
// record of every message the broker accepted is stored, once.

const SENSORS = [10100, 10101, 20100, 30100];
const MESSAGES = 400;
const PER_MESSAGE = 25;
const BASE = Date.UTC(2025, 1, 1); // no demo telemetry this far back

describeMqtt('MQTT JSON topics across a crash', (backend) => {
  let server: Running | undefined;
  const store = serverStore(backend, 'mqttcrash');
  const id = unique('crash');
  const env = {
    ...store.env,
    MQTT_URL: BROKER,
    MQTT_HOST_ID: id,
    MQTT_CLIENT_ID: `${id}-svc`,
    MQTT_TOPIC_PREFIX: `${id}/`,
    MQTT_SESSION_EXPIRY_S: '600',
  };
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await store.dispose();
  });

  const start = async () => {
    const started = await startServerProcess(env, 120_000);
    server = started.server;
    // Subscribed (or, after the crash, back in its session).
    await waitFor(async () => {
      const health = await (await fetch(`${started.base}/health`)).json();
      return health.mqtt?.connected ? true : undefined;
    });
    return started.base;
  };

  /** The stored records, read from the database once the server is gone. */
  const rows = async (): Promise<{ sensor_id: number; ts: Date; value: number }[]> => {
    const sql = `SELECT sensor_id, ts, value FROM sensor_logs WHERE ts >= $1 AND ts < $2 ORDER BY sensor_id, ts`;
    const range = [new Date(BASE).toISOString(), new Date(BASE + 86_400_000 * 30).toISOString()];
    if (backend === 'postgres')
      return store.admin(async (c) => {
        await c.query(`SET search_path = ${store.schema}`);
        return (await c.query(sql, range)).rows;
      });
    // The embedded database belongs to the server process: read it once that is gone.
    const db = await openPglite(store.dataDir);
    try {
      return await db.query(sql, range);
    } finally {
      await db.close();
    }
  };

  let token = '';
  /** Records of the test's range, counted through the raw download of each sensor. */
  const countThrough = async (base: string) => {
    let n = 0;
    for (const sensorId of SENSORS) {
      const res = await fetch(`${base}/v1/sensors/logs/raw`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          sensorId,
          start: new Date(BASE).toISOString(),
          end: new Date(BASE + 30 * 86_400_000).toISOString(),
        }),
      });
      if (res.status !== 200) throw new Error(`raw download: ${res.status}`);
      n += ((await res.json()) as unknown[]).length;
    }
    return n;
  };

  it('stores every message the broker accepted exactly once after kill -9 mid-stream', async () => {
    await store.prepare();
    const first = await start();
    const secret = /clientSecret:\s+(\S+)/.exec(server!.stdout())?.[1];
    expect(secret, server!.stdout()).toBeTruthy();
    const tokenRes = await fetch(`${first}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: 'demo', clientSecret: secret }),
    });
    token = (await tokenRes.json()).accessToken;
    const gw = await gateway();
    const messages = Array.from({ length: MESSAGES }, (_, m) =>
      Array.from({ length: PER_MESSAGE }, (_, i) => ({
        sensorID: SENSORS[m % SENSORS.length],
        value: m * 1000 + i,
        timestamp: new Date(
          BASE + (Math.floor(m / SENSORS.length) * PER_MESSAGE + i) * 60_000,
        ).toISOString(),
      })),
    );
    const topicOf = (sensor: number) =>
      `${id}/site-monitor/v1/sites/${Math.floor(sensor / 10_000)}/logs/sensor`;
    // The broker PUBACKs each publish once it has it (before the service has stored anything).
    let accepted = 0;
    const publishing = Promise.all(
      messages.map((batch) =>
        gw
          .publishAsync(topicOf(batch[0].sensorID), JSON.stringify(batch), { qos: 1 })
          .then(() => accepted++),
      ),
    );
    // Killed once the service has stored some messages and not yet all of them (PostgreSQL: read
    // while it runs; the embedded database: as soon as the first messages are acknowledged).
    await until(
      async () => (await countThrough(first)) >= PER_MESSAGE * 5,
      'the first messages stored',
    );
    server!.child.kill('SIGKILL');
    await server!.exited;
    const storedAtCrash = await rows();
    // Killed mid-stream: some messages were not yet stored (the broker still has them).
    expect(storedAtCrash.length).toBeLessThan(MESSAGES * PER_MESSAGE);
    await publishing;
    expect(accepted).toBe(MESSAGES);
    await gw.endAsync();

    // Restarted with the same client id: the broker delivers what was not acknowledged.
    const base = await start();
    // Every record there: read through the service itself (the embedded database is its own).
    await until(async () => (await countThrough(base)) === MESSAGES * PER_MESSAGE, 'every record', {
      ms: 120_000,
      every: 500,
    });
    server!.child.kill('SIGTERM');
    await server!.exited;
    const all = await rows();
    // Keyed by (sensor, timestamp): a redelivered message never makes a second row.
    expect(all.length).toBe(MESSAGES * PER_MESSAGE);
    const expected = messages
      .flat()
      .map((r) => `${r.sensorID} ${Date.parse(r.timestamp)} ${r.value}`)
      .sort();
    expect(all.map((r) => `${r.sensor_id} ${r.ts.getTime()} ${r.value}`).sort()).toEqual(expected);
  }, 300_000);
});
