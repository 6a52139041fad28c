// Soak: the real server (a child process) on PostgreSQL under a realistic mix for SOAK_MINUTES,
// reporting every 30 s the requests answered, their p50 / p99 latency, errors (anything but the
// expected status, or no answer) and the server's resident memory; at the end, whether memory stayed
// flat (mean RSS of the second half within 10 % of the first half's, after a one-minute warm-up).
//   - gateways, one per site: every SOAK_GATEWAY_MS a batch of logs of its sensors and a generic
//     batch of readings (pumps, meters, tanks); now and then an alarm, some of them resolved later;
//   - viewers: the site list with current values, a site's configuration (gzip), a day of hourly
//     sensor summaries, the active alarms, a month of tickets, one after another;
//   - stream subscribers, each on a few sites.
//   npx tsx bench/soak.ts
// Env: SOAK_MINUTES (10), SOAK_SITES (20), SOAK_VIEWERS (4), SOAK_SUBSCRIBERS (20), SOAK_GATEWAY_MS
// (1000), SOAK_REPORT_S (30), BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/test).
import { cpus, loadavg } from 'node:os';
import { upsertClient } from '../src/auth/clients.js';
import { migrate } from '../src/db/migrate.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { freePort, Histogram, onPostgres, rssOf, startServer, reportSection } from './harness.js';
import { record } from './record.js';
import { openSubscribers, type Subscribers } from './stream-clients.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const MINUTES = env('SOAK_MINUTES', 10);
const SITES = env('SOAK_SITES', 20);
const VIEWERS = env('SOAK_VIEWERS', 4);
const SUBSCRIBERS = env('SOAK_SUBSCRIBERS', 20);
const GATEWAY_MS = env('SOAK_GATEWAY_MS', 1000);
const REPORT_S = env('SOAK_REPORT_S', 30);
const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SECRET = 'soak-secret-123456';

interface Equipment {
  site: number;
  sensors: number[];
  meters: number[];
  pumps: number[];
  tanks: number[];
}

/** One reporting window: latencies of answered requests, errors by kind, requests by kind. */
class Window {
  hist = new Histogram();
  byKind = new Map<string, Histogram>();
  add(kind: string, ms: number) {
    this.hist.add(ms);
    let h = this.byKind.get(kind);
    if (!h) this.byKind.set(kind, (h = new Histogram()));
    h.add(ms);
  }
  /** The kind of request with the highest p99 in this window, with that p99. */
  slowest(): string {
    let worst = '';
    let p99 = -1;
    for (const [kind, h] of this.byKind) if (h.pct(0.99) > p99) [worst, p99] = [kind, h.pct(0.99)];
    return worst ? `${worst} ${p99.toFixed(0)}` : '';
  }
  requests = new Map<string, number>();
  errors = new Map<string, number>();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  await record('soak', { postgres: DB_URL });
  const rows: string[] = [];
  const say = (line: string) => {
    console.log(line);
    rows.push(line);
  };
  await onPostgres(DB_URL, 'soak', async (db, dbEnv) => {
    await migrate(db);
    const doc = generateDemo({
      sites: SITES,
      sensorsPerSite: 10,
      pumpsPerSite: 3,
      transactionsPerSite: 20,
      imagesPerSite: 0,
    });
    await importDocument(db, doc);
    await upsertClient(db, { clientId: 'soak', clientSecret: SECRET, siteIds: '*' });
    await db.close();
    const ofSite = (
      site: number,
      list: Record<string, unknown>[] | undefined,
      id: string,
      siteKey = 'SiteID',
    ) => (list ?? []).filter((r) => r[siteKey] === site).map((r) => r[id] as number);
    const fleet: Equipment[] = doc.sites!.map((s) => ({
      site: s.SiteID as number,
      sensors: ofSite(s.SiteID as number, doc.sensors, 'SiteSensorID'),
      meters: ofSite(s.SiteID as number, doc.flowMeters, 'SiteFlowMeterID'),
      pumps: ofSite(s.SiteID as number, doc.pumps, 'SitePumpID'),
      tanks: ofSite(s.SiteID as number, doc.tankGroups, 'SiteTankGroupID'),
    }));

    const port = await freePort();
    const stop = await startServer(port, {
      ...dbEnv,
      RATE_LIMIT_MAX: '1000000000',
      ROLLUP_REFRESH_MS: '1000',
    });
    const base = `http://127.0.0.1:${port}`;
    let window = new Window();
    let running = true;
    let subs: Subscribers | undefined;
    const rss: number[] = [];
    try {
      const tokenRes = await fetch(`${base}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ clientId: 'soak', clientSecret: SECRET }),
      });
      const token = ((await tokenRes.json()) as { accessToken: string }).accessToken;
      const auth = { authorization: `Bearer ${token}` };

      /** One request, counted in the current window; `ok` is the expected status. */
      async function call(
        kind: string,
        path: string,
        init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
        ok = 200,
      ): Promise<unknown> {
        const w = window;
        w.requests.set(kind, (w.requests.get(kind) ?? 0) + 1);
        const t0 = performance.now();
        try {
          const res = await fetch(`${base}${path}`, {
            method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
            headers: {
              ...auth,
              ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
              ...init.headers,
            },
            body: init.body === undefined ? undefined : JSON.stringify(init.body),
            signal: AbortSignal.timeout(30_000),
          });
          const body = res.headers.get('content-type')?.includes('json')
            ? await res.json()
            : await res.arrayBuffer();
          w.add(kind, performance.now() - t0);
          if (res.status !== ok) throw new Error(`${res.status}`);
          return body;
        } catch {
          w.errors.set(kind, (w.errors.get(kind) ?? 0) + 1);
          return undefined;
        }
      }

      async function gateway(e: Equipment, n: number) {
        const alarms: string[] = [];
        for (let round = 0; running; round++) {
          const next = performance.now() + GATEWAY_MS;
          const now = Date.now();
          // Six samples a sensor, 100 ms apart: every batch writes new keys.
          const logs = e.sensors.flatMap((id, i) =>
            Array.from({ length: 6 }, (_, k) => ({
              sensorID: id,
              value: (round + i + k) % 100,
              timestamp: new Date(now - k * 100).toISOString(),
            })),
          );
          const ts = new Date(now).toISOString();
          const readings = [
            ...e.pumps.map((id) => ({
              sitePumpID: id,
              running: round % 7 !== 0,
              frequency: 50 + (round % 5),
              pressure: 900,
              timestamp: ts,
            })),
            ...e.meters.map((id) => ({
              flowMeterID: id,
              totalVolume: round * 10,
              flowRate: 80,
              timestamp: ts,
            })),
            ...e.tanks.map((id) => ({
              siteTankGroupID: id,
              entryTankLevel: 10 + (round % 20),
              exitTankLevel: 9,
              timestamp: ts,
            })),
          ];
          await Promise.all([
            call('logs batch', '/v1/edge/logs/sensor/batch', { body: logs }, 201),
            call('readings batch', '/v1/edge/readings/generic', { body: { readings } }, 201),
          ]);
          if ((round + n) % 10 === 0) {
            const sent = (await call(
              'alarm',
              '/v1/edge/alarms',
              {
                body: {
                  siteId: e.site,
                  sitePumpID: e.pumps[0],
                  alarmType: `Trip${round % 3}`,
                  message: 'pump tripped',
                  value: round,
                  timestamp: ts,
                },
              },
              201,
            )) as { SiteAlarmLogID?: string } | undefined;
            if (sent?.SiteAlarmLogID) alarms.push(sent.SiteAlarmLogID);
          }
          if (alarms.length > 2)
            await call('alarm resolve', '/v1/edge/alarms/resolve', {
              body: { siteId: e.site, alarms: [{ SiteAlarmLogID: alarms.shift() }] },
            });
          await sleep(Math.max(0, next - performance.now()));
        }
      }

      async function viewer(n: number) {
        for (let round = 0; running; round++) {
          const e = fleet[(n + round) % fleet.length];
          const now = Date.now();
          await call('sites', '/v1/sites?page=1&perPage=50&dataType=additional');
          await call('config', `/v1/config/site?siteId=${e.site}`, {
            headers: { 'accept-encoding': 'gzip' },
          });
          await call('summaries', '/v1/sensors/logs/load', {
            body: {
              sensorIds: e.sensors,
              start: new Date(now - 86_400_000).toISOString(),
              end: new Date(now).toISOString(),
              interval: '1h',
            },
          });
          await call('active alarms', '/v1/edge/alarms/active', {
            body: { siteIds: fleet.map((f) => f.site) },
          });
          await call('tickets', '/v1/transactions/logs/load', {
            body: {
              siteIds: [e.site],
              start: new Date(now - 30 * 86_400_000).toISOString(),
              end: new Date(now).toISOString(),
            },
          });
          await sleep(250);
        }
      }

      const sites = fleet.map((f) => f.site);
      subs = await openSubscribers(
        base,
        token,
        sites.slice(0, Math.min(5, sites.length)).join(','),
        SUBSCRIBERS,
      );
      say(
        `Soak on PostgreSQL: ${SITES} sites (gateways every ${GATEWAY_MS} ms), ${VIEWERS} viewers, ${SUBSCRIBERS} stream subscribers, ${MINUTES} min; ` +
          `${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}, load average before ${loadavg()[0].toFixed(2)}.`,
      );
      say('');
      say(
        '| minute | requests/s | p50 ms | p99 ms | slowest kind (its p99 ms) | errors | stream events | server RSS MB |',
      );
      say('|---|---|---|---|---|---|---|---|');
      const workers = [
        ...fleet.map((e, i) => gateway(e, i)),
        ...Array.from({ length: VIEWERS }, (_, i) => viewer(i)),
      ];
      const started = performance.now();
      let events = 0;
      while (performance.now() - started < MINUTES * 60_000) {
        await sleep(Math.min(REPORT_S * 1000, MINUTES * 60_000 - (performance.now() - started)));
        const w = window;
        window = new Window();
        const total = [...w.requests.values()].reduce((a, b) => a + b, 0);
        const errors = [...w.errors.values()].reduce((a, b) => a + b, 0);
        const received = subs.readings.concat(subs.others).reduce((a, b) => a + b, 0);
        const mb = rssOf(stop.pid) / 1024 / 1024;
        rss.push(mb);
        const detail = errors ? ` (${[...w.errors].map(([k, v]) => `${k} ${v}`).join(', ')})` : '';
        say(
          `| ${((performance.now() - started) / 60_000).toFixed(1)} | ${(total / REPORT_S).toFixed(0)} | ${w.hist.pct(0.5).toFixed(1)} | ${w.hist.pct(0.99).toFixed(1)} | ${w.slowest()} | ${errors}${detail} | ${received - events} | ${mb.toFixed(0)} |`,
        );
        events = received;
      }
      running = false;
      await Promise.all(workers);
      // Flat memory: after the first minute, the second half's mean RSS within 10 % of the first half's.
      const steady = rss.slice(Math.ceil(60 / REPORT_S));
      const half = Math.floor(steady.length / 2);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      const [first, second] = [mean(steady.slice(0, half)), mean(steady.slice(half))];
      say('');
      say(
        half
          ? `Server RSS after the first minute: first half ${first.toFixed(0)} MB, second half ${second.toFixed(0)} MB (${(((second - first) / first) * 100).toFixed(1)} %): ${Math.abs(second - first) <= first * 0.1 ? 'flat' : 'NOT flat'}. Streams ended early: ${subs.ended}.`
          : `Too short to judge memory (needs at least two reports after the first minute). Streams ended early: ${subs.ended}.`,
      );
    } finally {
      running = false;
      subs?.close();
      await stop();
    }
  });
  reportSection('Soak', ['Measured by `npx tsx bench/soak.ts`.', '', ...rows].join('\n'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
