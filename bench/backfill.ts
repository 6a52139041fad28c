// Summaries at every moment (contract 17): a gateway backfills a year of one-minute logs for 10
// sensors through the batch route, then the operator asks for that year's summaries at once and every
// 250 ms; then gateways send 60 s of late data for the same sensors (replays of stored days and new
// samples between stored ones) while the summaries keep being asked every 250 ms. Every answer must
// be a 200, its last byte within 2 s. On PostgreSQL as shipped (tables never analyzed); the real
// server in a child process, requests over HTTP.
//   npx tsx bench/backfill.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_DAYS (default 366),
// BENCH_LATE_S (default 60), BENCH_UPLOADERS (default 4). Uses a schema of its own, dropped after.
import { cpus, loadavg } from 'node:os';
import { upsertClient } from '../src/auth/clients.js';
import { migrate } from '../src/db/migrate.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { Partitions } from '../src/telemetry/partitions.js';
import { freePort, onPostgres, reportSection, startServer, type Stop } from './harness.js';
import { record } from './record.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DAYS = Number(process.env.BENCH_DAYS ?? 366);
const LATE_S = Number(process.env.BENCH_LATE_S ?? 60);
const UPLOADERS = Number(process.env.BENCH_UPLOADERS ?? 4);
const SECRET = 'bench-secret-123456';
const BATCH_MINUTES = 1000; // × 10 sensors: 10,000 records a request, the batch route's limit
const MINUTE = 60_000;
const ids = Array.from({ length: 10 }, (_, i) => 10100 + i);
const end = Date.UTC(2026, 0, 1);
const start = end - DAYS * 86_400_000;

const lines: string[] = [];
const say = (s: string) => {
  console.log(s);
  lines.push(s);
};
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;

/** Noise in [0, 1), the same for the same sensor and time (a replay sends the same values). */
const noise = (id: number, t: number) => {
  const x = Math.sin(id * 12.9898 + (t / MINUTE) * 78.233) * 43758.5453;
  return x - Math.floor(x);
};
/** A drifting level with noise, at two decimals (what a level transmitter sends). */
const value = (id: number, t: number) =>
  Math.round(
    (50 + 20 * Math.sin(t / 86_400_000 + id) + 3 * Math.sin(t / 5_400_000) + noise(id, t)) * 100,
  ) / 100;

const logsOf = (from: number, minutes: number, offsetMs = 0) =>
  ids.flatMap((sensorID) =>
    Array.from({ length: minutes }, (_, m) => {
      const t = from + m * MINUTE + offsetMs;
      return { sensorID, timestamp: new Date(t).toISOString(), value: value(sensorID, t) };
    }),
  );

interface Answer {
  status: number;
  ms: number;
}

async function main() {
  await record('backfill', { postgres: DB_URL });
  say(
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0].model.trim()}), Node ${process.version}; load average before the run ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}.`,
  );
  say(
    `Command: \`npx tsx bench/backfill.ts\` (server in a child process, ${UPLOADERS} uploaders of 10,000 records a request, summaries over HTTP; PostgreSQL, tables never analyzed).`,
  );
  await onPostgres(DB_URL, 'backfill', async (db, env) => {
    await migrate(db);
    await importDocument(
      db,
      generateDemo({ sites: 1, sensorsPerSite: 12, transactionsPerSite: 0, imagesPerSite: 0 }),
    );
    await upsertClient(db, { clientId: 'bench', clientSecret: SECRET, siteIds: '*' });
    await new Partitions(db).cover(Date.now());
    const port = await freePort();
    let stop: Stop | undefined;
    try {
      stop = await startServer(port, { ...env, RATE_LIMIT_MAX: '100000000' });
      const base = `http://127.0.0.1:${port}`;
      const { accessToken } = (await (
        await fetch(`${base}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ clientId: 'bench', clientSecret: SECRET }),
        })
      ).json()) as { accessToken: string };
      const headers = {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
      };
      const upload = async (records: unknown[]) => {
        const res = await fetch(`${base}/v1/edge/logs/sensor/batch`, {
          method: 'POST',
          headers,
          body: JSON.stringify(records),
        });
        const text = await res.text();
        if (res.status !== 201) throw new Error(`upload: ${res.status} ${text.slice(0, 200)}`);
        return JSON.parse(text) as { stored: number; duplicates: number };
      };
      const kinds = [
        ['1d', 'eventWeighted'],
        ['1d', 'timeWeighted'],
        ['1h', 'eventWeighted'],
        ['1h', 'timeWeighted'],
      ] as const;
      /** One summary of the 10 sensors over the whole range, timed to its last byte. */
      const summary = async (n: number): Promise<Answer> => {
        const [interval, calculationBasis] = kinds[n % kinds.length];
        const t0 = performance.now();
        const res = await fetch(`${base}/v1/sensors/logs/load`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            sensorIds: ids,
            start: new Date(start).toISOString(),
            end: new Date(end).toISOString(),
            interval,
            calculationBasis,
          }),
        });
        const body = await res.text();
        const answer = { status: res.status, ms: performance.now() - t0 };
        if (res.status !== 200)
          console.log(
            `summary ${interval} ${calculationBasis}: ${res.status} ${body.slice(0, 160)}`,
          );
        return answer;
      };
      /** Asks a summary every 250 ms (the next one once the last answered, if that took longer) until `done`. */
      const poll = async (done: () => boolean) => {
        const answers: (Answer & { kind: string })[] = [];
        for (let n = 0; !done(); n++) {
          const t0 = performance.now();
          const answer = await summary(n);
          answers.push({ ...answer, kind: kinds[n % kinds.length].join(' ') });
          const wait = 250 - (performance.now() - t0);
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        return answers;
      };
      const report = (what: string, answers: (Answer & { kind: string })[]) => {
        const times = answers.map((a) => a.ms);
        const bad = answers.filter((a) => a.status !== 200).length;
        const slow = answers.filter((a) => a.ms > 2000).length;
        say(
          `| ${what} | ${answers.length} | ${bad} | ${slow} | ${pct(times, 50).toFixed(0)} ms | ${pct(times, 99).toFixed(0)} ms | ${Math.max(...times).toFixed(0)} ms |`,
        );
        for (const kind of new Set(answers.map((a) => a.kind))) {
          const of = answers.filter((a) => a.kind === kind).map((a) => a.ms);
          console.log(
            `  ${kind}: max ${Math.max(...of).toFixed(0)} ms, p50 ${pct(of, 50).toFixed(0)} ms`,
          );
        }
      };

      // The backfill: consecutive chunks of 1,000 minutes, UPLOADERS requests in flight.
      const chunks = Math.ceil((DAYS * 1440) / BATCH_MINUTES);
      let next = 0;
      let stored = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: UPLOADERS }, async () => {
          for (let c = next++; c < chunks; c = next++) {
            const from = start + c * BATCH_MINUTES * MINUTE;
            const minutes = Math.min(BATCH_MINUTES, (end - from) / MINUTE);
            const res = await upload(logsOf(from, minutes));
            stored += res.stored;
            if (c % 50 === 0) process.stdout.write(`\rbackfill: ${c + 1}/${chunks} requests`);
          }
        }),
      );
      const took = (performance.now() - t0) / 1000;
      console.log('');
      const [{ n: marks }] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM rollup_dirty`,
      );
      say(
        `Backfill: ${stored.toLocaleString('en-US')} logs (10 sensors × ${DAYS} days × 1/min) in ${took.toFixed(1)} s = ${Math.round(stored / took).toLocaleString('en-US')} logs/s; stale quarters left behind it: ${marks}.`,
      );
      say('');
      say('| phase | summaries | not 200 | over 2 s | p50 | p99 | max |');
      say('|---|---|---|---|---|---|---|');
      const settle = performance.now();
      report(
        'right after the backfill (10 s, one every 250 ms)',
        await poll(() => performance.now() - settle > 10_000),
      );

      // Late data for 60 s: replays of stored days and new samples 30 s after stored minutes.
      let lateStored = 0;
      let lateDuplicates = 0;
      let lateRecords = 0;
      let stopping = false;
      const lateStart = performance.now();
      const late = Promise.all(
        Array.from({ length: UPLOADERS }, async (_, u) => {
          for (let n = 0; !stopping; n++) {
            const day = Math.floor(Math.random() * (DAYS - 1));
            const from = start + day * 86_400_000 + Math.floor(Math.random() * 400) * MINUTE;
            const replay = (n + u) % 2 === 0;
            const records = logsOf(from, BATCH_MINUTES, replay ? 0 : 30_000);
            const res = await upload(records);
            lateRecords += records.length;
            lateStored += res.stored;
            lateDuplicates += res.duplicates;
          }
        }),
      );
      const during = await poll(() => performance.now() - lateStart > LATE_S * 1000);
      stopping = true;
      await late;
      const lateTook = (performance.now() - lateStart) / 1000;
      report(`during ${LATE_S} s of late data`, during);
      say('');
      say(
        `Late data: ${lateRecords.toLocaleString('en-US')} records in ${lateTook.toFixed(1)} s = ${Math.round(lateRecords / lateTook).toLocaleString('en-US')} records/s (${lateStored.toLocaleString('en-US')} stored: new samples between stored minutes; ${lateDuplicates.toLocaleString('en-US')} duplicates: replays; a replay of a sample stored by an earlier late batch counts as a duplicate).`,
      );
    } finally {
      await stop?.();
    }
  });
  reportSection('Backfill', lines.join('\n'));
}

await main();
