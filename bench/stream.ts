// Live stream benchmark (issue 12): 100 subscribers on one site while 1,000 readings a second are
// uploaded to it (open loop, one reading a request), for 2 minutes:
//   - delivery latency from each upload's 201 (as its client saw it) to receipt by each subscriber,
//     p50 / p99 / max (target p99 <= 100 ms), after a 5 s warm-up;
//   - events lost: uploads answered 201 that a subscriber never got and for which it got no newer
//     reading of the same sensor either (target 0; coalesced ones are counted apart);
//   - the server's resident memory, every 10 s (target: flat: the mean of the second half of the run
//     within 10 % of the first's).
//   npx tsx bench/stream.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_STREAM_DURATION
// seconds (default 120), BENCH_STREAM_SUBSCRIBERS (100), BENCH_STREAM_RATE readings/s (1000),
// BENCH_SKIP_PGLITE=1. The real server runs in a child process; PostgreSQL in a schema of its own.
import { Worker } from 'node:worker_threads';
import { cpus, loadavg } from 'node:os';
import { upsertClient } from '../src/auth/clients.js';
import type { Database } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import {
  cpuSeconds,
  freePort,
  Histogram,
  onEachDatabase,
  rssOf,
  startServer,
  reportSection,
} from './harness.js';
import { record } from './record.js';
import { openSubscribers } from './stream-clients.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DURATION = Number(process.env.BENCH_STREAM_DURATION ?? 120);
const SUBSCRIBERS = Number(process.env.BENCH_STREAM_SUBSCRIBERS ?? 100);
const RATE = Number(process.env.BENCH_STREAM_RATE ?? 1000);
const WARMUP_S = 5;
const SECRET = 'bench-secret-123456';

interface Result {
  backend: string;
  uploads: number;
  errors: number;
  /** Uploads that replaced the current reading (the others were overtaken by a newer one: no event). */
  due: number;
  rate: number;
  deliveries: number;
  p50: number;
  p99: number;
  max: number;
  early: number;
  coalesced: number;
  lost: number;
  ended: number;
  rss: { at: number; mb: number }[];
  cpu: number;
  serverCpu: number;
  load: number;
}

async function provision(db: Database): Promise<number[]> {
  await migrate(db);
  const doc = generateDemo({
    sites: 1,
    sensorsPerSite: 100,
    transactionsPerSite: 0,
    imagesPerSite: 0,
  });
  await importDocument(db, doc);
  await upsertClient(db, { clientId: 'bench', clientSecret: SECRET, siteIds: '*' });
  return doc.sensors!.map((s) => s.SiteSensorID);
}

const rssMb = (pid: number) => rssOf(pid) / 1024 / 1024;

async function measure(
  backend: string,
  env: Record<string, string>,
  sensors: number[],
): Promise<Result> {
  const port = await freePort();
  const stop = await startServer(port, { ...env, RATE_LIMIT_MAX: '1000000000' });
  const base = `http://127.0.0.1:${port}`;
  try {
    const tokenRes = await fetch(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: 'bench', clientSecret: SECRET }),
    });
    const token = ((await tokenRes.json()) as { accessToken: string }).accessToken;
    const total = Math.ceil(RATE * (DURATION + 1));
    const answered = new Float64Array(total + 1); // performance.now() of each upload's 201 (0: not yet)
    const replaced = new Uint8Array(total + 1); // 1: it replaced the current reading, so an event is due
    const got = Array.from({ length: SUBSCRIBERS }, () => new Uint8Array(total + 1));
    const hist = new Histogram();
    const pending: [number, number][] = []; // events that arrived before their upload's 201 did
    const warm = Math.floor(RATE * WARMUP_S);
    const subs = await openSubscribers(base, token, '1', SUBSCRIBERS, (sub, value, at) => {
      got[sub][value] = 1;
      if (value < warm) return;
      if (answered[value]) hist.add(at - answered[value]);
      else pending.push([value, at]);
    });

    const rss: Result['rss'] = [];
    const started = performance.now();
    const sample = () =>
      rss.push({
        at: Math.round((performance.now() - started) / 1000),
        mb: Math.round(rssMb(stop.pid)),
      });
    sample();
    const sampler = setInterval(sample, 10_000);
    const cpu0 = process.cpuUsage();
    const serverCpu0 = cpuSeconds(stop.pid);
    // The uploader runs in a worker thread; times are compared on one clock (epoch milliseconds).
    const toHere = (epochMs: number) => epochMs - performance.timeOrigin;
    const upload = await new Promise<{ sent: number; errors: number; elapsed: number }>(
      (resolve, reject) => {
        const worker = new Worker(new URL('./stream-uploader.mjs', import.meta.url), {
          workerData: { base, token, sensors, rate: RATE, duration: DURATION },
        });
        worker.on(
          'message',
          (m: { answered: number[]; sent?: number; errors?: number; elapsed?: number }) => {
            for (let k = 0; k < m.answered.length; k += 3) {
              answered[m.answered[k]] = toHere(m.answered[k + 1]);
              if (m.answered[k + 2]) replaced[m.answered[k]] = 1;
            }
            if (m.sent !== undefined)
              resolve({ sent: m.sent, errors: m.errors!, elapsed: m.elapsed! });
          },
        );
        worker.on('error', reject);
      },
    );
    const { sent, errors, elapsed } = upload;
    await new Promise((r) => setTimeout(r, 3000)); // the last deliveries
    clearInterval(sampler);
    sample();
    const cpu = process.cpuUsage(cpu0);
    const serverCpu = (cpuSeconds(stop.pid) - serverCpu0) / (elapsed + 3);
    subs.close();

    let early = 0;
    for (const [value, at] of pending) {
      if (!answered[value]) continue;
      if (at < answered[value]) early++;
      hist.add(Math.max(0, at - answered[value]));
    }
    // Lost: replaced the current value (so an event is due), never received, and no newer reading of
    // that sensor received either (else it was coalesced).
    let lost = 0;
    let coalesced = 0;
    for (const mine of got) {
      const newestOf = new Map<number, number>();
      for (let v = sent - 1; v >= 0; v--) {
        const sensor = v % sensors.length;
        if (mine[v] && !newestOf.has(sensor)) newestOf.set(sensor, v);
        if (replaced[v] && !mine[v]) {
          if ((newestOf.get(sensor) ?? -1) > v) coalesced++;
          else lost++;
        }
      }
    }
    return {
      backend,
      uploads: sent - errors,
      errors,
      due: replaced.reduce((a, b) => a + b, 0),
      rate: Math.round((sent - errors) / elapsed),
      deliveries: hist.n,
      p50: hist.pct(0.5),
      p99: hist.pct(0.99),
      max: Math.round(hist.max),
      early,
      coalesced,
      lost,
      ended: subs.ended,
      rss,
      cpu: (cpu.user + cpu.system) / 1e6 / elapsed,
      serverCpu,
      load: loadavg()[0],
    };
  } finally {
    await stop();
  }
}

function report(results: Result[], before: number): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0]?.model.trim()}), Node ${process.version}, PostgreSQL on the same machine.`,
    `Command: \`npx tsx bench/stream.ts\`: the real server in a child process; in this process ${SUBSCRIBERS} subscribers of site 1 (raw HTTP, a minimal SSE parser) and an open-loop uploader of ${n(RATE)} single sensor readings a second (the site's sensors in turn, one request each, one keep-alive connection per sensor) for ${DURATION} s. ` +
      `Latency is from each upload's 201, as the uploader saw it, to receipt by each subscriber (after a ${WARMUP_S} s warm-up); an event that arrived before its 201 counts as 0. ` +
      `Server, database and load generator share the cores; one-minute load average before the run ${before.toFixed(2)}.`,
    '',
    '| database | uploads (201) | events due | req/s | deliveries | p50 ms | p99 ms | max ms | lost | coalesced | streams ended | server RSS MB, every 10 s | server CPU (of one core) | load generator CPU |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.backend} | ${n(r.uploads)}${r.errors ? ` (${r.errors} errors)` : ''} | ${n(r.due)} | ${n(r.rate)} | ${n(r.deliveries)} | ${r.p50} | ${r.p99} | ${r.max} | ${r.lost} | ${r.coalesced} | ${r.ended} | ${r.rss.map((s) => s.mb).join(' ')} | ${Math.round(r.serverCpu * 100)} % | ${Math.round(r.cpu * 100)} % |`,
    ),
    '',
    'Targets:',
    ...results.map((r) => {
      // The garbage collector makes RSS go up and down: compare the mean of each half of the run.
      const mean = (xs: { mb: number }[]) =>
        Math.round(xs.reduce((a, x) => a + x.mb, 0) / xs.length);
      const first = mean(r.rss.filter((x) => x.at > 0 && x.at <= DURATION / 2));
      const second = mean(r.rss.filter((x) => x.at > DURATION / 2));
      const growth = (second - first) / first;
      return (
        `- ${r.backend}: p99 ${r.p99} ms (target <= 100 ms) **${r.p99 <= 100 ? 'met' : 'not met'}**; lost ${r.lost} (target 0) **${r.lost === 0 ? 'met' : 'not met'}**` +
        `${r.coalesced ? `, ${n(r.coalesced)} coalesced` : ''}; memory: mean ${first} MB in the first half, ${second} MB in the second (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %) **${growth < 0.1 ? 'flat' : 'grew'}**.`
      );
    }),
  ];
  return lines.join('\n');
}

async function main() {
  await record('stream', { postgres: DB_URL, pglite: process.env.BENCH_SKIP_PGLITE !== '1' });
  const before = loadavg()[0];
  const results: Result[] = [];
  await onEachDatabase(DB_URL, 'stream', async (backend, db, env) => {
    const sensors = await provision(db);
    await db.close();
    results.push(await measure(backend, env as Record<string, string>, sensors));
    console.log(results.at(-1));
  });
  reportSection('Live stream', report(results, before));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
