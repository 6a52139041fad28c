// MQTT ingest benchmark (issue 19), one run on PostgreSQL through the local Mosquitto:
//   (a) Sparkplug B DDATA from 100 devices (one per edge node) x 50 metrics, each metric bound to a
//       sensor of its own, as fast as the simulated nodes publish: metric values (= records) per
//       second into the database, from the first publish to the last row committed (target >= 50,000);
//   (b) the same sensor logs as JSON batches (1,000 records a message, QoS 1, 4 gateways) and (c) as
//       HTTP batch uploads (1,000 records a request, 4 clients), in the same run: records/s into the
//       database (target: JSON >= 0.5 x HTTP);
//   (d) publish -> `reading` event on the live stream (one subscriber of the site), p50/p99/max, at
//       5,000 values/s for BENCH_MQTT_LATENCY_S seconds (default 20; target p99 <= 100 ms).
//   npx tsx bench/mqtt.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_MQTT_URL (default
// mqtt://127.0.0.1:1883), BENCH_MQTT_MESSAGES (DDATA per device in (a), default 100),
// BENCH_MQTT_BATCHES (JSON and HTTP batches, default 200), BENCH_MQTT_LATENCY_S.
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import mqtt from 'mqtt';
import { upsertClient } from '../src/auth/clients.js';
import type { Database } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { EdgeNode, bindingsDocument } from '../scripts/simulate-edge.js';
import {
  freePort,
  Histogram,
  onPostgres,
  rollupCatchUp,
  startServer,
  reportSection,
} from './harness.js';
import { record } from './record.js';
import { openSubscribers } from './stream-clients.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MQTT_URL = process.env.BENCH_MQTT_URL ?? 'mqtt://127.0.0.1:1883';
const NODES = 100;
const METRICS = 50;
const MESSAGES = Number(process.env.BENCH_MQTT_MESSAGES ?? 100);
const BATCHES = Number(process.env.BENCH_MQTT_BATCHES ?? 200);
const BATCH = 1000;
const CLIENTS = 4;
const LATENCY_S = Number(process.env.BENCH_MQTT_LATENCY_S ?? 20);
const LATENCY_RATE = 5000;
const SECRET = 'bench-secret-123456';
const load = () => loadavg()[0].toFixed(2);

async function provision(db: Database): Promise<number[]> {
  await migrate(db);
  const doc = generateDemo({
    sites: 1,
    sensorsPerSite: NODES * METRICS,
    transactionsPerSite: 0,
    imagesPerSite: 0,
  });
  await importDocument(db, doc);
  await upsertClient(db, { clientId: 'bench', clientSecret: SECRET, siteIds: '*' });
  // The first NODES x METRICS sensors (the demo adds the sensors of meters, pumps and tanks after).
  return doc.sensors!.map((s) => s.SiteSensorID).slice(0, NODES * METRICS);
}

const countLogs = async (db: Database, from: number, to: number) =>
  (
    await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM sensor_logs WHERE ts >= $1 AND ts < $2`,
      [new Date(from).toISOString(), new Date(to).toISOString()],
    )
  )[0].n;

/** Polls until `expected` rows are in [from, to); returns ms since `start` (performance.now()). */
async function committed(db: Database, from: number, to: number, expected: number, start: number) {
  for (;;) {
    const n = await countLogs(db, from, to);
    if (n >= expected) return performance.now() - start;
    if (performance.now() - start > 600_000) throw new Error(`only ${n} of ${expected} rows`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Batches of sensor logs: batch b holds 1,000 records of 50 sensors x 20 minutes from `base`. */
const batchOf = (sensors: number[], base: number, b: number) =>
  Array.from({ length: BATCH }, (_, i) => ({
    sensorID: sensors[(i % METRICS) + (b % (sensors.length / METRICS)) * METRICS],
    value: b + i / 1000,
    timestamp: new Date(
      base + (Math.floor(b / (sensors.length / METRICS)) * 20 + Math.floor(i / METRICS)) * 60_000,
    ).toISOString(),
  }));

async function main() {
  await record('mqtt', { postgres: DB_URL });
  const loadBefore = load();
  console.log(`load average before: ${loadBefore} on ${cpus().length} cores`);
  const lines: string[] = [];
  await onPostgres(DB_URL, 'mqtt', async (db, env) => {
    const sensors = await provision(db);
    const id = `bench-${randomBytes(3).toString('hex')}`;
    const prefix = `${id}/`;
    const group = 'bench';
    const shape = Array.from({ length: NODES }, (_, n) => ({
      node: `node-${n + 1}`,
      devices: [`dev-${n + 1}`],
    }));
    await importDocument(db, bindingsDocument(group, shape, METRICS, sensors));
    const port = await freePort();
    const stop = await startServer(port, {
      ...env,
      MQTT_URL,
      MQTT_HOST_ID: id,
      MQTT_CLIENT_ID: `${id}-svc`,
      MQTT_TOPIC_PREFIX: prefix,
      MQTT_SESSION_EXPIRY_S: '60',
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    });
    const base = `http://127.0.0.1:${port}`;
    try {
      for (;;) {
        const health = await (await fetch(`${base}/health`)).json();
        if (health.mqtt?.connected && health.mqtt?.sparkplugHost) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      const token = (
        await (
          await fetch(`${base}/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ clientId: 'bench', clientSecret: SECRET }),
          })
        ).json()
      ).accessToken as string;

      // (a) Sparkplug DDATA.
      const nodes = shape.map(
        (s) =>
          new EdgeNode({
            url: MQTT_URL,
            prefix,
            group,
            node: s.node,
            devices: s.devices,
            metrics: METRICS,
          }),
      );
      await Promise.all(nodes.map((n) => n.connect()));
      await new Promise((r) => setTimeout(r, 2000)); // the births stored
      const spFrom = Date.now() - 30 * 86_400_000;
      const spTo = spFrom + MESSAGES * 1000;
      console.log(
        `(a) Sparkplug: ${NODES} devices x ${METRICS} metrics x ${MESSAGES} DDATA; load ${load()}`,
      );
      const spStart = performance.now();
      await Promise.all(
        nodes.map(async (node, n) => {
          for (let m = 0; m < MESSAGES; m++)
            await node.data(
              0,
              Array.from({ length: METRICS }, (_, i) => n * 1000 + m + i / 100),
              { timestamp: spFrom + m * 1000 },
            );
        }),
      );
      const spPublished = performance.now() - spStart;
      const spValues = NODES * METRICS * MESSAGES;
      const spMs = await committed(db, spFrom, spTo, spValues, spStart);
      const spRate = Math.round(spValues / (spMs / 1000));
      console.log(
        `    published in ${spPublished.toFixed(0)} ms, committed in ${spMs.toFixed(0)} ms: ${spRate} values/s`,
      );

      // (b) JSON batches over MQTT, (c) HTTP batches: the same records, at other times.
      const jsonFrom = spFrom - 10 * 86_400_000;
      const perRange = Math.ceil(BATCHES / (sensors.length / METRICS)) * 20 * 60_000 + 86_400_000;
      const httpFrom = jsonFrom + perRange;
      console.log(
        `(b) JSON topics: ${BATCHES} messages of ${BATCH} records, ${CLIENTS} gateways, QoS 1; load ${load()}`,
      );
      const gateways = await Promise.all(
        Array.from({ length: CLIENTS }, (_, c) =>
          mqtt.connectAsync(MQTT_URL, { protocolVersion: 5, clientId: `${id}-gw-${c}` }),
        ),
      );
      const topic = `${prefix}site-monitor/v1/sites/1/logs/sensor`;
      const bodies = Array.from({ length: BATCHES }, (_, b) =>
        JSON.stringify(batchOf(sensors, jsonFrom, b)),
      );
      const jsonStart = performance.now();
      await Promise.all(
        gateways.map(async (gw, c) => {
          for (let b = c; b < BATCHES; b += CLIENTS)
            await gw.publishAsync(topic, bodies[b], { qos: 1 });
        }),
      );
      const jsonMs = await committed(db, jsonFrom, jsonFrom + perRange, BATCHES * BATCH, jsonStart);
      const jsonRate = Math.round((BATCHES * BATCH) / (jsonMs / 1000));
      console.log(`    ${jsonRate} records/s (${jsonMs.toFixed(0)} ms)`);
      await Promise.all(gateways.map((g) => g.endAsync()));

      console.log(
        `(c) HTTP batch upload: ${BATCHES} requests of ${BATCH} records, ${CLIENTS} clients; load ${load()}`,
      );
      const httpBodies = Array.from({ length: BATCHES }, (_, b) =>
        JSON.stringify(batchOf(sensors, httpFrom, b)),
      );
      const httpStart = performance.now();
      let errors = 0;
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          for (let b = c; b < BATCHES; b += CLIENTS) {
            const res = await fetch(`${base}/v1/edge/logs/sensor/batch`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
              body: httpBodies[b],
            });
            if (res.status !== 201) errors++;
            await res.arrayBuffer();
          }
        }),
      );
      const httpMs = await committed(
        db,
        httpFrom,
        httpFrom + perRange,
        BATCHES * BATCH - errors * BATCH,
        httpStart,
      );
      const httpRate = Math.round((BATCHES * BATCH) / (httpMs / 1000));
      console.log(`    ${httpRate} records/s (${httpMs.toFixed(0)} ms), ${errors} errors`);

      // (d) publish -> reading event, at 5,000 values/s: each node one DDATA of 50 values a second,
      // the nodes spread over the second. Measured once the refresher has rolled up what (b) and (c)
      // left (400,000 records of past days): that backlog is not part of a steady 5,000 values/s.
      const caughtUp = await rollupCatchUp(env.DATABASE_URL!);
      console.log(`(d) latency at ${LATENCY_RATE} values/s for ${LATENCY_S} s; load ${load()}`);
      const sentAt = new Map<number, number>();
      const hist = new Histogram();
      let received = 0;
      const subs = await openSubscribers(base, token, '1', 1, (_sub, value, at) => {
        const t = sentAt.get(value);
        if (t === undefined) return;
        received++;
        hist.add(at - t);
        sentAt.delete(value);
      });
      let seq = 1;
      const ticks = LATENCY_S * 10;
      const perTick = NODES / 10;
      const started = performance.now();
      let sent = 0;
      for (let tick = 0; tick < ticks; tick++) {
        const due = started + tick * 100;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const now = Date.now();
        await Promise.all(
          nodes.slice((tick % 10) * perTick, ((tick % 10) + 1) * perTick).map((node) => {
            const values = Array.from({ length: METRICS }, () => seq++);
            const at = performance.now();
            for (const v of values) sentAt.set(v, at);
            sent += values.length;
            return node.data(0, values, { timestamp: now });
          }),
        );
      }
      const end = performance.now() + 10_000;
      while (sentAt.size && performance.now() < end) await new Promise((r) => setTimeout(r, 100));
      subs.close();
      const achieved = Math.round(sent / ((performance.now() - started) / 1000));
      console.log(
        `    sent ${sent}, received ${received}, p50 ${hist.pct(0.5)} ms, p99 ${hist.pct(0.99)} ms, max ${hist.max.toFixed(1)} ms`,
      );
      await Promise.all(nodes.map((n) => n.death().catch(() => {})));

      const loadAfter = load();
      lines.push(
        `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores, PostgreSQL on the same machine, Mosquitto ${MQTT_URL} on it too (the server, the broker, the simulated gateways and the database share the cores).`,
        `Command: \`${process.env.BENCH_MQTT_URL ? `BENCH_MQTT_URL=${MQTT_URL} ` : ''}npx tsx bench/mqtt.ts\`. Load average before the run ${loadBefore}, after ${loadAfter}.`,
        '',
        '| what | amount | result | target |',
        '|---|---|---|---|',
        `| Sparkplug B DDATA into the database (${NODES} devices x ${METRICS} metrics, alias, QoS 0) | ${spValues} values | ${spRate} values/s (each value a sensor log, and submitted as a reading too) | >= 50,000 values/s: ${spRate >= 50_000 ? 'met' : 'missed'} |`,
        `| JSON topics, batches of ${BATCH} sensor logs, QoS 1, ${CLIENTS} gateways | ${BATCHES * BATCH} records | ${jsonRate} records/s | >= 0.5 x HTTP = ${Math.round(httpRate / 2)}: ${jsonRate >= httpRate / 2 ? 'met' : 'missed'} |`,
        `| HTTP batch upload, the same records, ${CLIENTS} clients | ${BATCHES * BATCH} records | ${httpRate} records/s (${errors} errors) | |`,
        `| publish -> \`reading\` event on the stream, ${achieved} values/s for ${LATENCY_S} s (${received} of ${sent} events received) | ${sent} values | p50 ${hist.pct(0.5)} ms, p99 ${hist.pct(0.99)} ms, max ${hist.max.toFixed(1)} ms | p99 <= 100 ms: ${hist.pct(0.99) <= 100 ? 'met' : 'missed'} |`,
        '',
        `Before (d), the refresher's backlog from (b) and (c): ${caughtUp}.`,
      );
    } finally {
      await stop();
      await db.close();
    }
  });
  reportSection('MQTT ingest', lines.join('\n'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
