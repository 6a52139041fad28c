// Summaries at every moment (contract 17): a gateway backfills a year of one-minute logs for 10
// sensors through the batch route, then the operator asks for that year's summaries at once and every
// 250 ms; then gateways send 60 s of late data for the same sensors (replays of stored days and new
// samples between stored ones) while the summaries keep being asked every 250 ms. Every answer must
// be a 200, its last byte within 2 s. On PostgreSQL as shipped (tables never analyzed); the real
// server in a child process, requests over HTTP.
// The archive on, as deployed: the year ends 2026-01-01, far older than ARCHIVE_AFTER_DAYS (35, the
// default), and the server's own pass comes every BENCH_ARCHIVE_INTERVAL_MS (default 10 s, the first
// as long after its start): it archives the backfilled days while the backfill goes on and after it,
// so the summaries are asked over archived days, and the late data lands in archived days (each
// upload moves its days back to rows; the next pass archives them again). The report says when each
// pass ended and how many days it archived (the server's metric site_monitor_archive_days_total), and
// how many of the year's sensor-days were archived at each phase's start and end.
//   npx tsx bench/backfill.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_DAYS (default 366),
// BENCH_LATE_S (default 60), BENCH_UPLOADERS (default 4), BENCH_ARCHIVE_INTERVAL_MS (default 10000),
// BENCH_ARCHIVE=off the server's archive off (ARCHIVE_AFTER_DAYS=0; the runs before 2026-11-28).
// Uses a schema of its own, dropped after.
import type { Database } from '../src/db/index.js';
import {
  DEMO_SENSORS,
  machineLine,
  onPostgres,
  percentile as pct,
  provisionSensors,
  reportLines,
  reportSection,
  startApi,
  watchArchive,
  type Api,
} from './harness.js';
import { record } from './record.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const DAYS = Number(process.env.BENCH_DAYS ?? 366);
const LATE_S = Number(process.env.BENCH_LATE_S ?? 60);
const UPLOADERS = Number(process.env.BENCH_UPLOADERS ?? 4);
const ARCHIVE = process.env.BENCH_ARCHIVE !== 'off';
const AFTER_DAYS = 35;
const INTERVAL_MS = Number(process.env.BENCH_ARCHIVE_INTERVAL_MS ?? 10_000);
const BATCH_MINUTES = 1000; // × 10 sensors: 10,000 records a request, the batch route's limit
const MINUTE = 60_000;
const ids = DEMO_SENSORS;
const end = Date.UTC(2026, 0, 1);
const start = end - DAYS * 86_400_000;
const { lines, say } = reportLines();
const int = (n: number) => n.toLocaleString('en-US');

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

/** The year's sensor-days archived now (sensor_log_days, docs/storage.md). */
async function archivedDays(db: Database): Promise<number> {
  const [{ n }] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM sensor_log_days WHERE sensor_id = ANY($1::int[]) AND day >= $2::timestamptz AND day < $3::timestamptz`,
    [ids, new Date(start).toISOString(), new Date(end).toISOString()],
  );
  return n;
}

async function main() {
  await record('backfill', { postgres: DB_URL });
  say(machineLine());
  say(
    `Command: \`npx tsx bench/backfill.ts\` (server in a child process, ${UPLOADERS} uploaders of 10,000 records a request, summaries over HTTP; PostgreSQL, tables never analyzed; ${ARCHIVE ? `the archive on: ARCHIVE_AFTER_DAYS=${AFTER_DAYS}, the server's pass every ${INTERVAL_MS / 1000} s (ARCHIVE_INTERVAL_MS=${INTERVAL_MS}), the first ${Math.min(INTERVAL_MS, 60_000) / 1000} s after its start` : 'the archive off (BENCH_ARCHIVE=off: ARCHIVE_AFTER_DAYS=0)'}).`,
  );
  await onPostgres(DB_URL, 'backfill', async (db, env) => {
    await provisionSensors(db);
    const api = await startApi({
      ...env,
      ARCHIVE_AFTER_DAYS: ARCHIVE ? String(AFTER_DAYS) : '0',
      ARCHIVE_INTERVAL_MS: String(INTERVAL_MS),
    });
    const started = performance.now();
    const watch = watchArchive(api, started);
    try {
      await run(api, db, started, watch.passes);
    } finally {
      await watch.stop();
      await api.stop();
    }
  });
  reportSection('Backfill', lines.join('\n'));
}

async function run(
  api: Api,
  db: Database,
  started: number,
  passes: { at: number; days: number }[],
) {
  const upload = async (records: unknown[]) => {
    const a = await api.post('/v1/edge/logs/sensor/batch', records);
    if (a.status !== 201) throw new Error(`upload: ${a.status} ${a.text.slice(0, 200)}`);
    return JSON.parse(a.text) as { stored: number; duplicates: number };
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
    const a = await api.post('/v1/sensors/logs/load', {
      sensorIds: ids,
      start: new Date(start).toISOString(),
      end: new Date(end).toISOString(),
      interval,
      calculationBasis,
    });
    if (a.status !== 200)
      console.log(`summary ${interval} ${calculationBasis}: ${a.status} ${a.text.slice(0, 160)}`);
    return { status: a.status, ms: a.ms };
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
  const s = (t: number) => `${((t - started) / 1000).toFixed(1)} s`;
  const total = ids.length * DAYS;
  /** The archived sensor-days at the phases' marks, and the lowest seen during late data. */
  const marks: { what: string; at: number; days: number }[] = [];
  const mark = async (what: string) => {
    if (ARCHIVE) marks.push({ what, at: performance.now(), days: await archivedDays(db) });
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
  const backfillEnd = performance.now();
  const took = (backfillEnd - t0) / 1000;
  console.log('');
  await mark('at the end of the backfill');
  const [{ n: stale }] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM rollup_dirty`,
  );
  say(
    `Backfill: ${int(stored)} logs (10 sensors × ${DAYS} days × 1/min, ${new Date(start).toISOString().slice(0, 10)} to ${new Date(end).toISOString().slice(0, 10)}) in ${took.toFixed(1)} s (${s(t0)} to ${s(backfillEnd)} after the server was up) = ${int(Math.round(stored / took))} logs/s; stale quarters left behind it: ${stale}.`,
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
  await mark('at the start of late data');
  const lateStart = performance.now();
  let lowest = marks.at(-1)?.days ?? 0;
  const sampler = ARCHIVE
    ? (async () => {
        while (!stopping) {
          lowest = Math.min(lowest, await archivedDays(db));
          await new Promise((r) => setTimeout(r, 1000));
        }
      })()
    : Promise.resolve();
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
  await sampler;
  const lateEnd = performance.now();
  const lateTook = (lateEnd - lateStart) / 1000;
  await mark('at the end of late data');
  lowest = Math.min(lowest, marks.at(-1)?.days ?? lowest);
  report(`during ${LATE_S} s of late data`, during);
  say('');
  say(
    `Late data: ${int(lateRecords)} records in ${lateTook.toFixed(1)} s (${s(lateStart)} to ${s(lateEnd)} after the server was up) = ${int(Math.round(lateRecords / lateTook))} records/s (${int(lateStored)} stored: new samples between stored minutes; ${int(lateDuplicates)} duplicates: replays; a replay of a sample stored by an earlier late batch counts as a duplicate).`,
  );
  if (!ARCHIVE) return;
  // The passes that ended by now (their metric read every second).
  await new Promise((r) => setTimeout(r, 1100));
  say('');
  say(
    `The archive: ${marks.map((m) => `${int(m.days)} of the ${int(total)} backfilled sensor-days archived ${m.what} (${s(m.at)})`).join('; ')}; during late data, ${int(lowest)} at the lowest (read every second, and at its end).`,
  );
  const atLate = marks[1]?.days ?? 0;
  say(
    `Passes that archived days (ended by, after the server was up: equipment-days; the metric read every second): ${passes.length ? passes.map((p) => `${(p.at / 1000).toFixed(1)} s: ${int(p.days)}`).join(', ') : 'none'}. Late uploads moved at least ${int(Math.max(0, atLate - lowest))} sensor-days back to rows (archived at the start of late data less the lowest seen during it; passes archived some again meanwhile).`,
  );
  if (!atLate)
    say(
      '**No day was archived when late data began: the summaries were over rows, not archived days** (a longer backfill or a shorter BENCH_ARCHIVE_INTERVAL_MS).',
    );
}

await main();
