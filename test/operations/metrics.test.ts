import { register } from 'prom-client';
import { Writable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createMetrics } from '../../src/metrics.js';
import { describeEachBackend, instrument, openTestDb, testSettings } from '../helper.js';
import { freePort, serverStore, startServerProcess, waitFor, type Running } from './process.js';

// Prometheus metrics (contract §15), from the real server over HTTP: uploads of two kinds (logs and
// readings), a replay, a 404, a parameterised route and a live stream, then a scrape of the metrics
// port, parsed. METRICS_PORT=0 serves nothing; the public port never serves /metrics.

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  type: string;
  samples: Sample[];
}

/** Prometheus' text format (as prom-client writes it): `# TYPE` before each family's samples. */
function parseMetrics(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: { name: string; family: Family } | undefined;
  for (const line of text.split('\n')) {
    if (!line.trim() || line.startsWith('# HELP')) continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      current = { name: type[1], family: { type: type[2], samples: [] } };
      families.set(type[1], current.family);
      continue;
    }
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    if (!current || !m[1].startsWith(current.name))
      throw new Error(`sample outside its family: ${line}`);
    current.family.samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return families;
}

// Quarters that have not ended (uploads may be up to 24 h ahead), which uploads leave marked for the
// refresher (ended ones they roll up themselves); no demo telemetry there.
const BASE = Math.floor(Date.now() / 3_600_000) * 3_600_000 + 2 * 3_600_000;
const at = (minutes: number) => new Date(BASE + minutes * 60_000).toISOString();

describeEachBackend('Prometheus metrics', (backend) => {
  let server: Running | undefined;
  const store = serverStore(backend, 'metrics');
  const { env } = store;

  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await store.dispose();
  });

  /** Starts the server (rollups not refreshed, so their backlog stays as the uploads leave it). */
  const start = async (metricsPort: number) => {
    const started = await startServerProcess(
      {
        ...env,
        METRICS_PORT: String(metricsPort),
        ROLLUP_REFRESH_MS: '0',
      },
      150_000,
    );
    server = started.server;
    return started.base;
  };

  it('counts requests by route pattern, stored records, streams and the rollup backlog; never on the public port', async () => {
    await store.prepare();
    const metricsPort = await freePort();
    const base = await start(metricsPort);
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const scrape = async () => {
      const res = await fetch(metricsUrl);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      const text = await res.text();
      return { text, families: parseMetrics(text) };
    };
    /** The value of the sample of that name (a histogram's `_count` too) with those labels. */
    const value = (
      families: Map<string, Family>,
      name: string,
      labels: Record<string, string> = {},
    ) =>
      [...families.values()]
        .flatMap((f) => f.samples)
        .find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
        ?.value;

    const secret = /clientSecret:\s+(\S+)/.exec(server!.stdout())?.[1];
    expect(secret, server!.stdout()).toBeTruthy();
    const tokenRes = await fetch(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: 'demo', clientSecret: secret }),
    });
    const token = ((await tokenRes.json()) as { accessToken: string }).accessToken;
    const auth = { authorization: `Bearer ${token}` };
    const backlogBefore = value((await scrape()).families, 'site_monitor_rollup_pending_buckets');
    expect(backlogBefore).toBeGreaterThanOrEqual(0);

    const upload = async (path: string, body: unknown) => {
      const res = await fetch(`${base}/v1/edge/${path}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status, path).toBe(201);
      return ((await res.json()) as { stored: number }).stored;
    };
    const sensorLogs = [0, 20, 40].map((m) => ({ sensorID: 10100, timestamp: at(m), value: m }));
    const soon = new Date(Date.now() + 60_000).toISOString(); // newer than the demo's current readings
    // Stored: sensor logs 3 + 0 (a replay) + 1, meter logs 2 + 1; one sensor reading, two meter readings.
    expect(await upload('logs/sensor/batch', sensorLogs)).toBe(3);
    expect(await upload('logs/sensor/batch', sensorLogs)).toBe(0);
    expect(
      await upload('logs/meter/batch', [
        { flowMeterID: 10301, timestamp: at(5), totalVolume: 1 },
        { flowMeterID: 10301, timestamp: at(10), totalVolume: 2 },
      ]),
    ).toBe(2);
    expect(
      await upload('logs/generic', [
        { sensorID: 10101, timestamp: at(60), value: 1 },
        { flowMeterID: 10302, timestamp: at(60), totalVolume: 3 },
      ]),
    ).toBe(2);
    expect(await upload('readings/sensor', { sensorID: 10100, timestamp: soon, value: 7 })).toBe(1);
    expect(
      await upload('readings/meter/batch', {
        readings: [
          { flowMeterID: 10301, timestamp: soon, totalVolume: 5 },
          { flowMeterID: 10302, timestamp: soon, totalVolume: 6 },
        ],
      }),
    ).toBe(2);

    // A parameterised route, an unknown path, and the public port's /metrics: 404.
    expect((await fetch(`${base}/v1/config/meters/10301`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${base}/v1/no-such-thing/12345?secret=x`, { headers: auth })).status).toBe(
      404,
    );
    expect((await fetch(`${base}/metrics`)).status).toBe(404);

    // A live stream counts while it is open.
    const stream = new AbortController();
    const open = await fetch(`${base}/v1/stream?siteIds=1`, {
      headers: auth,
      signal: stream.signal,
    });
    expect(open.status).toBe(200);
    await waitFor(async () =>
      value((await scrape()).families, 'site_monitor_stream_subscribers') === 1 ? true : undefined,
    );
    stream.abort();
    await waitFor(async () =>
      value((await scrape()).families, 'site_monitor_stream_subscribers') === 0 ? true : undefined,
    );

    const { text, families } = await scrape();
    const types = Object.fromEntries([...families].map(([name, f]) => [name, f.type]));
    expect(types).toMatchObject({
      http_request_duration_seconds: 'histogram',
      site_monitor_ingested_records_total: 'counter',
      site_monitor_rollup_pending_buckets: 'gauge',
      site_monitor_rollup_set_aside_buckets: 'gauge',
      site_monitor_stream_subscribers: 'gauge',
      site_monitor_db_pool_waiting: 'gauge',
      site_monitor_db_failovers_total: 'counter',
      site_monitor_db_unwritable_seconds_total: 'counter',
      site_monitor_mqtt_messages_total: 'counter',
      process_resident_memory_bytes: 'gauge',
      nodejs_eventloop_lag_seconds: 'gauge',
    });
    expect(value(families, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    // The ingest counter is exactly what the uploads stored, per kind, type and source.
    const ingested = families.get('site_monitor_ingested_records_total')!.samples;
    const counted = Object.fromEntries(
      ingested.map((s) => [`${s.labels.kind} ${s.labels.type} ${s.labels.source}`, s.value]),
    );
    expect(counted).toEqual({
      'sensor log http': 4,
      'meter log http': 3,
      'pump log http': 0,
      'tank log http': 0,
      'sensor reading http': 1,
      'meter reading http': 2,
      'pump reading http': 0,
      'tank reading http': 0,
      // Gateways over MQTT (none here): the series exist from the start at 0.
      'sensor log mqtt': 0,
      'meter log mqtt': 0,
      'pump log mqtt': 0,
      'tank log mqtt': 0,
      'sensor reading mqtt': 0,
      'meter reading mqtt': 0,
      'pump reading mqtt': 0,
      'tank reading mqtt': 0,
    });
    // Six 15-minute buckets changed: sensor 10100 three, meter 10301 one, sensor 10101 and meter 10302 one each.
    expect(value(families, 'site_monitor_rollup_pending_buckets')).toBe(backlogBefore! + 6);
    expect(value(families, 'site_monitor_db_pool_waiting')).toBe(0);
    // No failover here (the cluster's is test/operations/failover.test.ts).
    expect(value(families, 'site_monitor_db_failovers_total')).toBe(0);
    expect(value(families, 'site_monitor_db_unwritable_seconds_total')).toBe(0);
    expect(value(families, 'site_monitor_rollup_set_aside_buckets')).toBe(0);
    expect(
      Object.fromEntries(
        families
          .get('site_monitor_mqtt_messages_total')!
          .samples.map((s) => [s.labels.result, s.value]),
      ),
    ).toEqual({ stored: 0, ignored: 0, malformed: 0, rejected: 0 });

    // Routes are the router's patterns; what no route serves is one value; no id, query or credential anywhere.
    const http = families.get('http_request_duration_seconds')!.samples;
    const count = (route: string, status: string, method = 'GET') =>
      value(families, 'http_request_duration_seconds_count', {
        route,
        status_code: status,
        method,
      });
    expect(count('/v1/config/meters/:meterId', '200')).toBe(1);
    expect(count('unmatched', '404')).toBeGreaterThanOrEqual(2); // /v1/no-such-thing and the public /metrics
    expect(count('/v1/edge/logs/sensor/batch', '201', 'POST')).toBe(2);
    for (const s of http) {
      expect(s.labels.route === 'unmatched' || s.labels.route.startsWith('/'), s.labels.route).toBe(
        true,
      );
      expect(s.labels.route, 'no ids in routes').not.toMatch(/\/\d+(\/|$)|\?/);
    }
    // Searched in names, labels and help texts, not in sample values: a value (a byte count, a
    // duration) may hold the digits of an id by chance.
    const named = text
      .split('\n')
      .map((line) => (line.startsWith('#') ? line : line.replace(/\s\S+$/, '')))
      .join('\n');
    expect(named).toContain('http_request_duration_seconds_count{');
    for (const leak of ['10301', 'no-such-thing', 'siteIds', '?', secret!, token, '"demo"'])
      expect(named.includes(leak) && leak, `the scrape names ${leak}`).toBe(false);

    // Shutdown closes the metrics port with the rest; with METRICS_PORT=0 nothing serves metrics.
    server!.child.kill('SIGTERM');
    expect(await server!.exited).toBe(0);
    await expect(fetch(metricsUrl)).rejects.toThrow();
    const again = await start(0);
    await expect(fetch(metricsUrl)).rejects.toThrow();
    expect((await fetch(`${again}/metrics`)).status).toBe(404);
    expect(server!.stderr()).not.toContain('metrics');
    server!.child.kill('SIGTERM');
    expect(await server!.exited).toBe(0);
  }, 300_000);
});

describeEachBackend('the rollup backlog gauge', (backend) => {
  it('counts the marks when scraped, and keeps the last count (logged) when counting fails', async () => {
    const db = await openTestDb(backend);
    let failing = false;
    const flaky = instrument(db, (view) => ({
      query: (sql, params, options) =>
        failing && sql.includes('rollup_dirty')
          ? Promise.reject(new Error('connection refused'))
          : view.query(sql, params, options),
    }));
    const logs: string[] = [];
    const stream = new Writable({
      write: (chunk, _enc, done) => (logs.push(String(chunk)), done()),
    });
    const metrics = createMetrics();
    const app = await buildApp(testSettings({ ROLLUP_REFRESH_MS: 0 }), {
      db: flaky,
      logger: { level: 'warn', stream },
      metrics,
    });
    try {
      const backlog = async () =>
        parseMetrics(await metrics.registry.metrics()).get('site_monitor_rollup_pending_buckets')!
          .samples[0].value;
      const mark = (id: number) =>
        db.query(`INSERT INTO rollup_dirty (kind, equipment_id, bucket) VALUES (1, $1, now())`, [
          id,
        ]);
      expect(await backlog()).toBe(0);
      await mark(1);
      await mark(2);
      expect(await backlog()).toBe(2);
      failing = true;
      await mark(3);
      expect(await backlog()).toBe(2);
      expect(logs.join('')).toContain('the rollup backlog could not be counted');
      failing = false;
      expect(await backlog()).toBe(3);
      // Everything is in the app's own registry: prom-client's global one stays empty (apps can be built again).
      expect(register.getMetricsAsArray()).toEqual([]);
    } finally {
      await app.close();
      await db.close();
    }
  });
});
