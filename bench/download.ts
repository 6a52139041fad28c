// Telemetry download benchmark (issue 7): a year of one-minute logs for 10 sensors and 60 days of
// one-second logs for one more, on PostgreSQL (targets) and PGlite (summaries, no target); the real
// server in a child process, requests over HTTP from this one, memory read from /proc from outside.
//   npx tsx bench/download.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_PGLITE=0 skips
// PGlite, BENCH_REPEAT requests per figure (default 15). Uses a schema of its own, dropped after;
// BENCH_SCHEMA=name keeps it (filled once, reused by later runs: for working on one figure).
// BENCH_ANALYZE=1 runs VACUUM ANALYZE after the load on PostgreSQL; by default the tables are as the
// service and autovacuum leave them, as in production.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { upsertClient } from '../src/auth/clients.js';
import type { Database } from '../src/db/index.js';
import { migrate } from '../src/db/migrate.js';
import { openPglite } from '../src/db/pglite.js';
import { openPostgres } from '../src/db/postgres.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { rebuildAll } from '../src/telemetry/rollups/refresh.js';
import { Partitions } from '../src/telemetry/partitions.js';
import { freePort, rssOf, startServer, reportSection, type Stop } from './harness.js';
import { describeDatabase, record } from './record.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REPEAT = Number(process.env.BENCH_REPEAT ?? 15);
/** Opt-in: VACUUM ANALYZE after the load, which the service never does itself (default: autovacuum's pace). */
const ANALYZE = process.env.BENCH_ANALYZE === '1';
const YEAR = { start: '2025-01-01T00:00:00Z', end: '2026-01-01T00:00:00Z' };
const SECONDS = { start: '2025-03-01T00:00:00Z', end: '' }; // 60 days, set in main
const SECRET = 'bench-secret-123456';
const lines: string[] = [];
const say = (s: string) => {
  console.log(s);
  lines.push(s);
};

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** Fills the database: ids[0..9] a year of minutes, secondsId 60 days of seconds; rollups built. Returns the build times. */
async function fill(db: Database, ids: number[], secondsId: number) {
  await new Partitions(db).cover(Date.now());
  const t0 = process.hrtime.bigint();
  await db.query(
    `INSERT INTO sensor_logs (sensor_id, ts, value)
       SELECT s.id, g.ts, round((100 + 20 * sin(date_part('epoch', g.ts) / 5000 + s.id) + s.id)::numeric, 3)::float8
         FROM unnest($1::int[]) AS s(id), generate_series($2::timestamptz, $3::timestamptz - interval '1 minute', interval '1 minute') AS g(ts)`,
    [ids, YEAR.start, YEAR.end],
  );
  await db.query(
    `INSERT INTO sensor_logs (sensor_id, ts, value)
       SELECT $1, g.ts, round((50 + 10 * sin(date_part('epoch', g.ts) / 300))::numeric, 3)::float8
         FROM generate_series($2::timestamptz, $3::timestamptz - interval '1 second', interval '1 second') AS g(ts)`,
    [secondsId, SECONDS.start, SECONDS.end],
  );
  const load = ms(t0);
  const t1 = process.hrtime.bigint();
  await rebuildAll(db);
  return { load, rollup: ms(t1) };
}

async function post(
  base: string,
  token: string,
  path: string,
  body: unknown,
  accept = 'application/json',
) {
  const t0 = process.hrtime.bigint();
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept },
    body: JSON.stringify(body),
  });
  let bytes = 0;
  for await (const c of res.body!) bytes += c.length;
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  return { ms: ms(t0), bytes };
}

async function timed(label: string, fn: () => Promise<{ ms: number; bytes: number }>, n = REPEAT) {
  await fn(); // warm-up
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const r = await fn();
    times.push(r.ms);
    bytes = r.bytes;
  }
  return { label, p50: pct(times, 50), p99: pct(times, 99), bytes };
}

async function token(base: string) {
  const res = await fetch(`${base}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ clientId: 'bench', clientSecret: SECRET }),
  });
  return ((await res.json()) as { accessToken: string }).accessToken;
}

/** The plain aggregation on the raw rows, in the database: the baseline, and the truth for exactness. */
async function plainGroupBy(db: Database, ids: number[], unit: 'day' | 'hour') {
  const t0 = process.hrtime.bigint();
  const rows = await db.query<{
    id: number;
    b: Date;
    count: number;
    min: number;
    max: number;
    avg: number;
    first: number;
    last: number;
  }>(
    `SELECT sensor_id AS id, date_trunc('${unit}', ts AT TIME ZONE 'UTC') AS b, count(*)::int AS count, min(value) AS min, max(value) AS max,
            avg(value) AS avg, (array_agg(value ORDER BY ts))[1] AS first, (array_agg(value ORDER BY ts DESC))[1] AS last
       FROM sensor_logs WHERE sensor_id = ANY($1::int[]) AND ts >= $2 AND ts < $3 GROUP BY 1, 2 ORDER BY 1, 2`,
    [ids, YEAR.start, YEAR.end],
  );
  return { ms: ms(t0), rows };
}

async function main() {
  await record('download', {
    postgres: DB_URL,
    pglite: process.env.BENCH_PGLITE !== '0',
    maintenance: ANALYZE
      ? 'VACUUM ANALYZE of the PostgreSQL schema after the load (BENCH_ANALYZE=1)'
      : undefined,
  });
  const ids = Array.from({ length: 10 }, (_, i) => 10100 + i);
  const secondsId = 10110;
  SECONDS.end = new Date(Date.parse(SECONDS.start) + 60 * 86_400_000).toISOString();
  say(
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0].model.trim()}), Node ${process.version}; load average before the run ${loadavg()[0].toFixed(2)}.`,
  );
  say(
    'Command: `npx tsx bench/download.ts` (server in a child process; requests over HTTP from this process, one at a time; memory of the server read from /proc).',
  );
  say(
    'Data: 10 sensors × one year of one-minute logs (5,256,000 rows) and 1 sensor × 60 days of one-second logs (5,184,000 rows).',
  );
  say('');

  // ---- PostgreSQL -------------------------------------------------------------------------------
  const kept = process.env.BENCH_SCHEMA;
  if (kept && !/^[a-z_][a-z0-9_]*$/.test(kept))
    throw new Error('BENCH_SCHEMA: a lower-case SQL identifier');
  const schema = kept ?? `bench_download_${randomBytes(4).toString('hex')}`;
  const admin = await openPostgres(DB_URL, { max: 1 });
  const reuse =
    kept !== undefined &&
    (await admin.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema])).length > 0;
  if (!reuse) await admin.query(`CREATE SCHEMA ${schema}`);
  let stop: Stop | undefined;
  try {
    const db = await openPostgres(DB_URL, { schema, statementTimeoutMs: 3_600_000 });
    await migrate(db);
    if (reuse) {
      say(`PostgreSQL: reusing the data of schema ${schema}.`);
    } else {
      await importDocument(
        db,
        generateDemo({ sites: 1, sensorsPerSite: 12, transactionsPerSite: 0, imagesPerSite: 0 }),
      );
      await upsertClient(db, { clientId: 'bench', clientSecret: SECRET, siteIds: '*' });
      const built = await fill(db, ids, secondsId);
      if (ANALYZE) await db.query('VACUUM ANALYZE');
      say(
        `PostgreSQL: loaded in ${(built.load / 1000).toFixed(1)} s; rollups built from nothing in ${(built.rollup / 1000).toFixed(1)} s (rebuildAll: one pass per level)${ANALYZE ? '; then VACUUM ANALYZE (BENCH_ANALYZE=1)' : '; no manual VACUUM or ANALYZE'}.`,
      );
    }
    const port = await freePort();
    const url = new URL(DB_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    stop = await startServer(port, { DATABASE_URL: url.toString(), RATE_LIMIT_MAX: '100000000' });
    const base = `http://127.0.0.1:${port}`;
    const tk = await token(base);
    const summary = (interval: string) => () =>
      post(base, tk, '/v1/sensors/logs/load', { sensorIds: ids, ...YEAR, interval });

    const daily = await timed(
      'daily summary, 10 sensors, one year (3,650 elements)',
      summary('1d'),
    );
    const plainDay = await timed(
      'plain GROUP BY day on the raw rows (in the database)',
      async () => ({ ms: (await plainGroupBy(db, ids, 'day')).ms, bytes: 0 }),
      5,
    );
    const hourly = await timed(
      'hourly summary, 10 sensors, one year (87,600 elements)',
      summary('1h'),
      10,
    );
    const plainHour = await timed(
      'plain GROUP BY hour on the raw rows (in the database)',
      async () => ({ ms: (await plainGroupBy(db, ids, 'hour')).ms, bytes: 0 }),
      5,
    );

    // 1,000 late records over the year: half replace stored minutes, half are new (at 30 s past a minute).
    const late: { sensorID: number; value: number; timestamp: string }[] = [];
    const y0 = Date.parse(YEAR.start);
    for (let i = 0; i < 1000; i++) {
      const minute = Math.floor(Math.random() * 525_600);
      late.push({
        sensorID: ids[i % 10],
        value: 1000 + i,
        timestamp: new Date(y0 + minute * 60_000 + (i % 2 ? 30_000 : 0)).toISOString(),
      });
    }
    const up = await fetch(`${base}/v1/edge/logs/sensor/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tk}`, 'content-type': 'application/json' },
      body: JSON.stringify(late),
    });
    const counts = await up.json();
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${base}/v1/sensors/logs/load`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tk}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sensorIds: ids, ...YEAR, interval: '1d' }),
    });
    const got = (await res.json()) as any[];
    const lateMs = ms(t0);
    const truth = (await plainGroupBy(db, ids, 'day')).rows;
    let mismatches = got.length === truth.length ? 0 : Math.abs(got.length - truth.length);
    const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
    truth.forEach((t, i) => {
      const g = got[i];
      if (
        !g ||
        g.sensorID !== t.id ||
        g.count !== t.count ||
        g.min !== t.min ||
        g.max !== t.max ||
        !close(g.avg, t.avg) ||
        g.first !== t.first ||
        g.last !== t.last
      )
        mismatches++;
    });
    const afterLate = await timed(
      'daily summary again (refresher has caught up or not)',
      summary('1d'),
      5,
    );

    const raw60 = await timed(
      'raw, 60 days of one-minute logs (86,400 rows)',
      () =>
        post(base, tk, '/v1/sensors/logs/raw', {
          sensorId: ids[0],
          start: '2025-03-01T00:00:00Z',
          end: SECONDS.end,
        }),
      10,
    );
    const rawCsv = await timed(
      'raw, the same as CSV',
      () =>
        post(
          base,
          tk,
          '/v1/sensors/logs/raw',
          { sensorId: ids[0], start: '2025-03-01T00:00:00Z', end: SECONDS.end },
          'text/csv',
        ),
      10,
    );

    // One-second logs: time to the last byte and the server's memory, sampled every 20 ms.
    const before = rssOf(stop.pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(stop!.pid))), 20);
    const big = await post(base, tk, '/v1/sensors/logs/raw', { sensorId: secondsId, ...SECONDS });
    clearInterval(sampler);
    peak = Math.max(peak, rssOf(stop.pid));
    const bigCsv = await post(
      base,
      tk,
      '/v1/sensors/logs/raw',
      { sensorId: secondsId, ...SECONDS },
      'text/csv',
    );

    const mb = (b: number) => (b / 1048576).toFixed(1);
    say('');
    say('| PostgreSQL | p50 ms | p99 ms | body | target | met |');
    say('|---|---|---|---|---|---|');
    const row = (
      r: { label: string; p50: number; p99: number; bytes: number },
      target = '',
      met = '',
    ) =>
      say(
        `| ${r.label} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.bytes ? `${mb(r.bytes)} MB` : ''} | ${target} | ${met} |`,
      );
    const dRatio = plainDay.p50 / daily.p50;
    const hRatio = plainHour.p50 / hourly.p50;
    row(
      daily,
      'p50 ≤ 30 ms, ≥ 30× plain',
      `${daily.p50 <= 30 && dRatio >= 30 ? 'yes' : 'no'} (${dRatio.toFixed(0)}×)`,
    );
    row(plainDay);
    row(
      hourly,
      'p50 ≤ 250 ms, ≥ 5× plain',
      `${hourly.p50 <= 250 && hRatio >= 5 ? 'yes' : 'no'} (${hRatio.toFixed(1)}×)`,
    );
    row(plainHour);
    say(
      `| daily summary right after 1,000 late records (${counts.stored} stored: ${counts.received} sent, half replacing stored minutes) | ${lateMs.toFixed(1)} | | | exact | ${mismatches === 0 ? 'yes' : `no (${mismatches} elements differ)`} |`,
    );
    row(afterLate);
    row(raw60, 'p50 ≤ 150 ms', raw60.p50 <= 150 ? 'yes' : 'no');
    row(rawCsv);
    const rate = 5_184_000 / (big.ms / 1000);
    say(
      `| raw, 60 days of one-second logs (5,184,000 rows), JSON | ${big.ms.toFixed(0)} (one request) | | ${mb(big.bytes)} MB | ≥ 400,000 rows/s | ${rate >= 400_000 ? 'yes' : 'no'} (${Math.round(rate).toLocaleString('en-US')} rows/s) |`,
    );
    say(
      `| the same as CSV | ${bigCsv.ms.toFixed(0)} (one request) | | ${mb(bigCsv.bytes)} MB | | ${Math.round(5_184_000 / (bigCsv.ms / 1000)).toLocaleString('en-US')} rows/s |`,
    );
    say(
      `| server memory growth during the one-second JSON download (RSS peak − before, sampled every 20 ms) | | | ${mb(peak - before)} MB | ≤ 50 MB | ${peak - before <= 50 * 1048576 ? 'yes' : 'no'} |`,
    );
    await stop();
    stop = undefined;
    await db.close();
  } finally {
    await stop?.();
    if (!kept) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.close();
  }

  // ---- PGlite: summaries only ---------------------------------------------------------------------
  if (process.env.BENCH_PGLITE !== '0') {
    const dir = mkdtempSync(join(tmpdir(), 'bench-download-'));
    try {
      const db = await openPglite(dir);
      console.log(`database: ${await describeDatabase(db, 'pglite')}`);
      await migrate(db);
      await importDocument(
        db,
        generateDemo({ sites: 1, sensorsPerSite: 12, transactionsPerSite: 0, imagesPerSite: 0 }),
      );
      await upsertClient(db, { clientId: 'bench', clientSecret: SECRET, siteIds: '*' });
      const built = await fill(db, ids, secondsId);
      await db.close();
      const port = await freePort();
      const lite = await startServer(port, { DATA_DIR: dir, RATE_LIMIT_MAX: '100000000' });
      try {
        const base = `http://127.0.0.1:${port}`;
        const tk = await token(base);
        const daily = await timed(
          'daily summary, 10 sensors, one year',
          () =>
            post(base, tk, '/v1/sensors/logs/load', { sensorIds: ids, ...YEAR, interval: '1d' }),
          10,
        );
        const hourly = await timed(
          'hourly summary, 10 sensors, one year',
          () =>
            post(base, tk, '/v1/sensors/logs/load', { sensorIds: ids, ...YEAR, interval: '1h' }),
          5,
        );
        const raw60 = await timed(
          'raw, 60 days of one-minute logs',
          () =>
            post(base, tk, '/v1/sensors/logs/raw', {
              sensorId: ids[0],
              start: '2025-03-01T00:00:00Z',
              end: SECONDS.end,
            }),
          5,
        );
        say('');
        say(
          `PGlite (no target): loaded in ${(built.load / 1000).toFixed(1)} s, rollups built in ${(built.rollup / 1000).toFixed(1)} s.`,
        );
        say('');
        say('| PGlite | p50 ms | p99 ms |');
        say('|---|---|---|');
        for (const r of [daily, hourly, raw60])
          say(`| ${r.label} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} |`);
      } finally {
        await lite();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  reportSection('Download', lines.join('\n'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
