// Historian benchmark (issue 18): 10 sensors × a year of irregular samples (about one a minute on
// average, with report-by-exception gaps of about an hour), on PostgreSQL with tables never analyzed
// (no manual VACUUM or ANALYZE). The real server in a child process, requests over HTTP, one at a time;
// the event- and time-weighted summaries they are compared with are timed in turns (timedPair).
//   npx tsx bench/historian.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_REPEAT requests per
// figure (default 15), BENCH_DAYS a shorter year for a trial. Uses a schema of its own, dropped after;
// BENCH_SCHEMA=name keeps it (filled once, reused by later runs: for working on one figure).
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { upsertClient } from '../src/auth/clients.js';
import { migrate } from '../src/db/migrate.js';
import { openPostgres } from '../src/db/postgres.js';
import { generateDemo } from '../src/provisioning/demo.js';
import { importDocument } from '../src/provisioning/import.js';
import { Partitions } from '../src/telemetry/partitions.js';
import { rebuildAll } from '../src/telemetry/rollups/refresh.js';
import { freePort, startServer, reportSection, type Stop } from './harness.js';
import { record, toRecord } from './record.js';
import { Access } from '../src/auth/access.js';
import type { Client } from '../src/auth/clients.js';
import type { Queryable } from '../src/db/index.js';
import { queryTimeWeighted } from '../src/telemetry/download/time-weighted.js';
import { openPlot } from '../src/telemetry/download/plot.js';
import { openInterpolated } from '../src/telemetry/download/interpolated.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REPEAT = Number(process.env.BENCH_REPEAT ?? 15);
// BENCH_DAYS shortens the year for a trial of the script (with BENCH_WRITE=0 and BENCH_RESULTS_DIR).
const YEAR = {
  start: '2025-01-01T00:00:00Z',
  end: process.env.BENCH_DAYS
    ? new Date(
        Date.parse('2025-01-01T00:00:00Z') + Number(process.env.BENCH_DAYS) * 86_400_000,
      ).toISOString()
    : '2026-01-01T00:00:00Z',
};
const SECRET = 'bench-secret-123456';
const lines: string[] = [];
const say = (s: string) => {
  console.log(s);
  lines.push(s);
};
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

async function timed(fn: () => Promise<unknown>, n = REPEAT) {
  await fn(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(ms(t0));
  }
  return { p50: pct(times, 50), p99: pct(times, 99) };
}

/**
 * Two requests whose figures are compared, timed in turns (a b, then b a, and so on) after a warm-up
 * of each: a machine that slows down or speeds up during the run then weighs on both alike, where
 * timing all of one and then all of the other put the drift into their ratio (0.90 to 1.59 × for
 * the same code in three runs of 2026-11-26).
 */
async function timedPair(a: () => Promise<unknown>, b: () => Promise<unknown>, n = REPEAT) {
  await a();
  await b();
  const [ta, tb]: number[][] = [[], []];
  const one = async (fn: () => Promise<unknown>, into: number[]) => {
    const t0 = process.hrtime.bigint();
    await fn();
    into.push(ms(t0));
  };
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      await one(a, ta);
      await one(b, tb);
    } else {
      await one(b, tb);
      await one(a, ta);
    }
  }
  const fig = (t: number[]) => ({ p50: pct(t, 50), p99: pct(t, 99) });
  return [fig(ta), fig(tb)] as const;
}

async function main() {
  await record('historian', { postgres: DB_URL });
  const ids = Array.from({ length: 10 }, (_, i) => 10100 + i);
  say(
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${cpus()[0].model.trim()}), Node ${process.version}; load average before the run ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (the machine is shared).`,
  );
  say(
    'Command: `npx tsx bench/historian.ts` (server in a child process; requests over HTTP, one at a time; the event- and time-weighted summaries of each interval timed in turns).',
  );
  const kept = process.env.BENCH_SCHEMA;
  if (kept !== undefined && !/^[a-z_][a-z0-9_]*$/.test(kept))
    throw new Error('BENCH_SCHEMA: a lower-case SQL identifier');
  const schema = kept ?? `bench_historian_${randomBytes(4).toString('hex')}`;
  const admin = await openPostgres(DB_URL, { max: 1 });
  const reuse =
    kept !== undefined &&
    (await admin.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema])).length > 0;
  if (!reuse) await admin.query(`CREATE SCHEMA ${schema}`);
  let stop: Stop | undefined;
  try {
    const db = await openPostgres(DB_URL, { schema, statementTimeoutMs: 3_600_000 });
    if (reuse) {
      const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sensor_logs`);
      say(
        `Data: ${n.toLocaleString('en-US')} rows of schema ${schema}, loaded by an earlier run (BENCH_SCHEMA); tables never analyzed by the bench.`,
      );
    } else {
      await migrate(db);
      await importDocument(
        db,
        generateDemo({ sites: 1, sensorsPerSite: 12, transactionsPerSite: 0, imagesPerSite: 0 }),
      );
      await upsertClient(db, { clientId: 'bench', clientSecret: SECRET, siteIds: '*' });
      await db.query(
        `UPDATE sensors SET step = (sensor_id % 2 = 1) WHERE sensor_id = ANY($1::int[])`,
        [ids],
      );
      await new Partitions(db).cover(Date.now());
      // Irregular samples: 30-second ticks with a random offset, each kept with probability 0.6, and
      // one silent hour in six per sensor (report by exception: gaps of about an hour).
      const t0 = process.hrtime.bigint();
      await db.query(
        `INSERT INTO sensor_logs (sensor_id, ts, value)
           SELECT s.id, g.ts + (random() * 29000) * interval '1 millisecond', round((100 + 20 * sin(date_part('epoch', g.ts) / 5000 + s.id) + random())::numeric, 3)::float8
             FROM unnest($1::int[]) AS s(id), generate_series($2::timestamptz, $3::timestamptz - interval '30 seconds', interval '30 seconds') AS g(ts)
            WHERE random() < 0.6 AND (date_part('hour', g.ts)::int + s.id) % 6 <> 0`,
        [ids, YEAR.start, YEAR.end],
      );
      const load = ms(t0);
      const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sensor_logs`);
      const t1 = process.hrtime.bigint();
      await rebuildAll(db);
      say(
        `Data: ${n.toLocaleString('en-US')} rows (10 sensors, ${YEAR.start.slice(0, 10)} to ${YEAR.end.slice(0, 10)}, half stepped), loaded in ${(load / 1000).toFixed(1)} s; rollups built in ${(ms(t1) / 1000).toFixed(1)} s; tables never analyzed.`,
      );
      say('');
    }

    const port = await freePort();
    const url = new URL(DB_URL);
    // The options of a connection string replace those the service sets (src/db/postgres.ts: jit=off),
    // so they are repeated here: with JIT on, plans whose estimates are large on never-analyzed tables
    // spend 100 ms and more compiling (the first run of this bench, 2026-11-25-historian.txt, did).
    url.searchParams.set('options', `-c jit=off -c search_path=${schema}`);
    stop = await startServer(port, { DATABASE_URL: url.toString(), RATE_LIMIT_MAX: '100000000' });
    const base = `http://127.0.0.1:${port}`;
    const tk = (
      (await (
        await fetch(`${base}/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ clientId: 'bench', clientSecret: SECRET }),
        })
      ).json()) as { accessToken: string }
    ).accessToken;
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tk}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 200)}`);
      return text;
    };
    const summary = (interval: string, basis: string) => () =>
      post('/v1/sensors/logs/load', { sensorIds: ids, ...YEAR, interval, calculationBasis: basis });

    const rows: [string, string, string, string][] = [];
    const fig = (x: number) => `${x.toFixed(1)} ms`;
    for (const interval of ['1d', '1h']) {
      const [ew, tw] = await timedPair(
        summary(interval, 'eventWeighted'),
        summary(interval, 'timeWeighted'),
      );
      const elements = (JSON.parse(await summary(interval, 'timeWeighted')()) as unknown[]).length;
      const label = interval === '1d' ? 'daily' : 'hourly';
      rows.push([
        `${label} summary, 10 sensors, a year: eventWeighted`,
        fig(ew.p50),
        fig(ew.p99),
        '',
      ]);
      rows.push([
        `${label} summary, 10 sensors, a year: timeWeighted (${elements} elements)`,
        fig(tw.p50),
        fig(tw.p99),
        `${(tw.p50 / ew.p50).toFixed(2)} × eventWeighted (target ≤ 1.5 ×)`,
      ]);
    }

    const plotBody = { sensorId: ids[0], ...YEAR, intervals: 1000 };
    const plot = await timed(() => post('/v1/sensors/logs/plot', plotBody));
    const plotN = (JSON.parse(await post('/v1/sensors/logs/plot', plotBody)) as unknown[]).length;
    // The same from the raw rows in plain SQL: each part's first, last, lowest and highest sample.
    const width = Math.floor((Date.parse(YEAR.end) - Date.parse(YEAR.start)) / 1000);
    const plain = await timed(
      () =>
        db.query(
          `SELECT part, (array_agg(ts ORDER BY ts))[1] AS first, (array_agg(ts ORDER BY ts DESC))[1] AS last,
                  (array_agg(ts ORDER BY value, ts))[1] AS lo, (array_agg(ts ORDER BY value DESC, ts))[1] AS hi
             FROM (SELECT ts, value, least(999, floor((date_part('epoch', ts - $2::timestamptz) * 1000) / $4))::int AS part
                     FROM sensor_logs WHERE sensor_id = $1 AND ts >= $2 AND ts < $3) x
            GROUP BY part ORDER BY part`,
          [ids[0], YEAR.start, YEAR.end, width],
        ),
      5,
    );
    rows.push([
      `plot values, one sensor, a year, 1,000 intervals (${plotN} samples)`,
      fig(plot.p50),
      fig(plot.p99),
      `target p50 ≤ 50 ms; ${(plain.p50 / plot.p50).toFixed(1)} × faster than plain SQL on the raw rows (target ≥ 10 ×)`,
    ]);
    rows.push([
      'plain SQL on the raw rows (in the database, no HTTP)',
      fig(plain.p50),
      fig(plain.p99),
      '',
    ]);

    const y0 = Date.parse(YEAR.start);
    const span = Date.parse(YEAR.end) - y0;
    const times = Array.from({ length: 1000 }, () =>
      new Date(y0 + Math.floor(Math.random() * span)).toISOString(),
    );
    const interp = await timed(() =>
      post('/v1/sensors/logs/interpolated', { sensorIds: ids, times }),
    );
    rows.push([
      '10,000 interpolated values (10 sensors × 1,000 random times over the year)',
      fig(interp.p50),
      fig(interp.p99),
      'target p50 ≤ 100 ms',
    ]);
    const gridBody = {
      sensorIds: ids,
      start: '2025-06-01T00:00:00Z',
      end: '2025-06-07T00:00:00Z',
      interval: '1m' as const,
      timeZone: 'Europe/Berlin',
    };
    const grid = await timed(() => post('/v1/sensors/logs/interpolated', gridBody));
    const gridN = (JSON.parse(await post('/v1/sensors/logs/interpolated', gridBody)) as unknown[])
      .length;
    rows.push([
      `${gridN} interpolated values on a one-minute grid (10 sensors × a week)`,
      fig(grid.p50),
      fig(grid.p99),
      '',
    ]);

    // Plans on the never-analyzed tables (issue 21): every query the three engines send, EXPLAINed.
    const seen: [string, string, unknown[]][] = [];
    let label = '';
    const spy: Queryable = {
      query: (sql, params, opts) => {
        if (/_logs|_rollups|rollup_dirty/.test(sql)) seen.push([label, sql, params ?? []]);
        return db.query(sql, params, opts);
      },
    };
    const access = new Access({
      clientId: 'bench',
      siteIds: null,
      cameraIds: null,
      admin: true,
      role: 'full',
    } as unknown as Client);
    const drain = async (d: { pages: AsyncIterator<unknown> }) => {
      while (!(await d.pages.next()).done);
    };
    const y = { start: Date.parse(YEAR.start), end: Date.parse(YEAR.end), zone: 'UTC' };
    label = 'timeWeighted 1d';
    await queryTimeWeighted(spy, 'sensor', { ids, ...y, interval: '1d' });
    label = 'timeWeighted 1h Europe/Berlin';
    await queryTimeWeighted(spy, 'sensor', { ids, ...y, interval: '1h', zone: 'Europe/Berlin' });
    label = 'plot';
    await drain(await openPlot(spy, access, plotBody));
    label = 'interpolated times';
    await drain(await openInterpolated(spy, access, { sensorIds: ids, times }));
    label = 'interpolated grid';
    await drain(await openInterpolated(spy, access, gridBody));
    say('');
    say(
      "Plans of the engines' queries on the never-analyzed tables (EXPLAIN; whole plans in the result file):",
    );
    for (const [what, sql, params] of seen) {
      const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).map(
        (r) => r['QUERY PLAN'],
      );
      toRecord(`\n-- ${what}\n${plan.join('\n')}\n`);
      const sorts = plan.filter(
        (l) => /\bSort\b/.test(l) && !/Sort Key|Sort Method/.test(l),
      ).length;
      const bitmaps = plan.filter((l) => /Bitmap/.test(l)).length;
      const seqLogs = plan.filter((l) => /Seq Scan on (sensor_logs|sensor_rollups)/.test(l)).length;
      say(
        `- ${what}: ${plan.length} plan lines; Sort nodes ${sorts}, Bitmap nodes ${bitmaps}, sequential scans of logs or rollups ${seqLogs}`,
      );
    }
    say('');
    say('| figure | p50 | p99 | against the target |');
    say('|---|---|---|---|');
    for (const r of rows) say(`| ${r.join(' | ')} |`);
    say('');
    say(
      `Load average after the run: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}.`,
    );
    await stop();
    stop = undefined;
    reportSection('Historian', lines.join('\n'));
  } finally {
    await stop?.();
    if (!kept) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
