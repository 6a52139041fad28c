import { afterAll, expect, it } from 'vitest';
import { openPglite } from '../../src/db/pglite.js';
import { describeEachBackend } from '../helper.js';
import { serverStore, startServerProcess, waitFor, type Running } from '../operations/process.js';

// kill -9 of the real server while gateways upload: after a restart, every record that was answered
// 201 is there exactly once (a replay of all of them stores nothing new), and the service serves.

const SENSORS = [10100, 10101, 20100, 30100];
const BATCH = 40;
const BASE = Date.UTC(2025, 0, 1); // no demo telemetry this far back

interface Batch {
  sensorID: number;
  value: number;
  timestamp: string;
}

describeEachBackend('telemetry upload across a crash', (backend) => {
  let server: Running | undefined;
  const store = serverStore(backend, 'crash');
  const { dataDir, schema, env, admin } = store;

  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await store.dispose();
  });

  const start = async () => {
    const started = await startServerProcess(
      {
        ...env,
        RATE_LIMIT_MAX: '1000000',
      },
      120_000,
    );
    server = started.server;
    return started.base;
  };

  const upload = (base: string, token: string, batch: Batch[]) =>
    fetch(`${base}/v1/edge/logs/sensor/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(batch),
    });

  it('keeps every acknowledged record, once, after kill -9 mid-upload', async () => {
    await store.prepare();
    let base = await start();
    const secret = /clientSecret:\s+(\S+)/.exec(server!.stdout())?.[1];
    expect(secret, server!.stdout()).toBeTruthy();
    const tokenRes = await fetch(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: 'demo', clientSecret: secret }),
    });
    const token = (await tokenRes.json()).accessToken as string;

    // Four gateways upload batches of their sensor's minutes until the server dies under them.
    const acknowledged: Batch[][] = [];
    let sent = 0;
    const gateway = async (g: number) => {
      for (let b = 0; ; b++) {
        const batch = Array.from({ length: BATCH }, (_, i) => ({
          sensorID: SENSORS[g],
          value: g * 1000 + b + i / 100,
          timestamp: new Date(BASE + (b * BATCH + i) * 60_000).toISOString(),
        }));
        sent++;
        try {
          const res = await upload(base, token, batch);
          if (res.status !== 201) throw new Error(`status ${res.status}`);
          await res.json();
          acknowledged.push(batch);
        } catch {
          return; // the server is gone
        }
      }
    };
    const gateways = SENSORS.map((_, g) => gateway(g));
    await waitFor(() => (acknowledged.length >= 30 ? true : undefined), 60_000);
    server!.child.kill('SIGKILL');
    await server!.exited;
    await Promise.all(gateways);
    expect(sent).toBeGreaterThan(acknowledged.length);

    // Restart on the same data: every acknowledged record is already there, and only once.
    base = await start();
    for (const batch of acknowledged) {
      const res = await upload(base, token, batch);
      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ received: BATCH, stored: 0, duplicates: BATCH });
    }
    server!.child.kill('SIGTERM');
    expect(await server!.exited).toBe(0);

    const rows = await (async () => {
      const sql = `SELECT sensor_id, ts, value, count(*) OVER (PARTITION BY sensor_id, ts) AS copies FROM sensor_logs WHERE ts < '2025-06-01'`;
      if (backend === 'postgres') {
        const res = await admin((c) =>
          c.query(sql.replace('sensor_logs', `${schema}.sensor_logs`)),
        );
        return res.rows;
      }
      const db = await openPglite(dataDir);
      try {
        return await db.query(sql);
      } finally {
        await db.close();
      }
    })();
    const stored = new Map(rows.map((r) => [`${r.sensor_id}:${new Date(r.ts).toISOString()}`, r]));
    expect(rows.every((r) => Number(r.copies) === 1)).toBe(true);
    for (const record of acknowledged.flat()) {
      const row = stored.get(`${record.sensorID}:${record.timestamp}`);
      expect(row?.value, `${record.sensorID} ${record.timestamp}`).toBe(record.value);
    }
    expect(rows.length).toBeGreaterThanOrEqual(acknowledged.length * BATCH);
  }, 240_000);
});
