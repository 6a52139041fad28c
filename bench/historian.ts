// Historian benchmark (issue 18): 10 sensors × a year of irregular samples (about one a minute on
// average, with report-by-exception gaps of about an hour), on PostgreSQL with tables never analyzed
// (no manual VACUUM or ANALYZE). The real server in a child process, requests over HTTP, one at a time;
// the event- and time-weighted summaries they are compared with are timed in turns (inTurns).
// The same figures twice in one run: over rows, then over archived days. Between the two, the
// service's archive pass (runArchive, as `npm run site-monitor -- archive` runs it, here in this
// process, ARCHIVE_AFTER_DAYS=35; the year lies far older) moves every sensor-day of the year into
// the archive, and the same server answers the same requests again; each answer over archived days
// is compared with the same one over rows. The server's own pass is off (ARCHIVE_AFTER_DAYS=0 in its
// environment; reads do not depend on it), so that the rows stay rows until the bench's pass.
//   npx tsx bench/historian.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_REPEAT requests per
// figure (default 15), BENCH_BUDGET_S the most seconds a figure's requests may take (default 120:
// after that it is the p50 of fewer, and the report says how many), BENCH_DAYS a shorter year for a
// trial, BENCH_ARCHIVED=0 only over rows (as before 2026-11-28), =only only over archived days.
// Uses a schema of its own, dropped after; BENCH_SCHEMA=name keeps it (filled once, reused by later
// runs: for working on one figure; once archived, only BENCH_ARCHIVED=only can reuse it).
import { Access } from '../src/auth/access.js';
import type { Client } from '../src/auth/clients.js';
import type { Database, Queryable } from '../src/db/index.js';
import { archiveUntil } from '../src/telemetry/archive/pass.js';
import { openInterpolated } from '../src/telemetry/download/interpolated.js';
import { openPlot } from '../src/telemetry/download/plot.js';
import { queryTimeWeighted } from '../src/telemetry/download/time-weighted.js';
import { rebuildAll } from '../src/telemetry/rollups/refresh.js';
import {
  archivePass,
  DEMO_SENSORS,
  inTurns,
  loadAfterLine,
  machineLine,
  msSince,
  onPostgres,
  percentile as pct,
  provisionSensors,
  reportLines,
  reportSection,
  startApi,
  timedRuns,
  type Api,
} from './harness.js';
import { record, toRecord } from './record.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REPEAT = Number(process.env.BENCH_REPEAT ?? 15);
const BUDGET_MS = Number(process.env.BENCH_BUDGET_S ?? 120) * 1000;
const ARCHIVED = process.env.BENCH_ARCHIVED ?? '1';
if (!['0', '1', 'only'].includes(ARCHIVED)) throw new Error('BENCH_ARCHIVED: 0, 1 or only');
const PHASES = (
  ARCHIVED === '0' ? ['rows'] : ARCHIVED === 'only' ? ['archived'] : ['rows', 'archived']
) as Phase[];
/** The archive's setting for the bench's pass: the service's default. */
const AFTER_DAYS = 35;
const DAY = 86_400_000;
// BENCH_DAYS shortens the year for a trial of the script (with BENCH_WRITE=0 and BENCH_RESULTS_DIR).
const YEAR = {
  start: '2025-01-01T00:00:00Z',
  end: process.env.BENCH_DAYS
    ? new Date(
        Date.parse('2025-01-01T00:00:00Z') + Number(process.env.BENCH_DAYS) * DAY,
      ).toISOString()
    : '2026-01-01T00:00:00Z',
};
const YEAR_DAYS = Math.round((Date.parse(YEAR.end) - Date.parse(YEAR.start)) / DAY);
const ids = DEMO_SENSORS;
const { lines, say } = reportLines();
const fig = (x: number) => `${x.toFixed(1)} ms`;

type Phase = 'rows' | 'archived';
const PHASE_LABEL: Record<Phase, string> = { rows: 'over rows', archived: 'over archived days' };

/** A figure's timings, or why there are none. */
type Timed = { times: number[] } | { error: string };
interface Measured {
  summaries: Record<
    '1d' | '1h',
    { ew: number[]; tw: number[]; elements: number } | { error: string }
  >;
  plot: Timed & { samples?: number };
  /** Plain SQL on the raw rows (over rows only). */
  plain?: number[];
  interpolated: Timed;
  grid: Timed & { values?: number };
}

/** One answer of each request over rows, to compare the archived days' answers with. */
const answersOverRows = new Map<string, string>();
/** Requests whose answer over archived days was compared with the one over rows, and those that differ. */
const compared = new Set<string>();
const differing: string[] = [];

async function load(db: Database) {
  await provisionSensors(db);
  await db.query(`UPDATE sensors SET step = (sensor_id % 2 = 1) WHERE sensor_id = ANY($1::int[])`, [
    ids,
  ]);
  // Irregular samples: 30-second ticks with a random offset, each kept with probability 0.6, and
  // one silent hour in six per sensor (report by exception: gaps of about an hour). Times to the
  // millisecond, as the service takes them (the archive refuses a day with finer times: runs before
  // 2026-11-28 had microseconds).
  const t0 = process.hrtime.bigint();
  await db.query(
    `INSERT INTO sensor_logs (sensor_id, ts, value)
       SELECT s.id, date_trunc('milliseconds', g.ts + (random() * 29000) * interval '1 millisecond'), round((100 + 20 * sin(date_part('epoch', g.ts) / 5000 + s.id) + random())::numeric, 3)::float8
         FROM unnest($1::int[]) AS s(id), generate_series($2::timestamptz, $3::timestamptz - interval '30 seconds', interval '30 seconds') AS g(ts)
        WHERE random() < 0.6 AND (date_part('hour', g.ts)::int + s.id) % 6 <> 0`,
    [ids, YEAR.start, YEAR.end],
  );
  const loadMs = msSince(t0);
  const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sensor_logs`);
  const t1 = process.hrtime.bigint();
  await rebuildAll(db);
  say(
    `Data: ${n.toLocaleString('en-US')} rows (10 sensors, ${YEAR.start.slice(0, 10)} to ${YEAR.end.slice(0, 10)}, half stepped), loaded in ${(loadMs / 1000).toFixed(1)} s; rollups built in ${(msSince(t1) / 1000).toFixed(1)} s; tables never analyzed.`,
  );
}

/** The figures of one phase, over the server's API; over rows also plain SQL in the database. */
async function measure(api: Api, db: Database, phase: Phase): Promise<Measured> {
  /** A POST that must answer 200; returns its milliseconds, and keeps or compares its answer. */
  const post = async (key: string, path: string, body: unknown) => {
    const a = await api.post(path, body);
    if (a.status !== 200) {
      let message = a.text.slice(0, 200);
      try {
        message = (JSON.parse(a.text) as { message?: string }).message ?? message;
      } catch {
        // not JSON
      }
      throw new Error(`${a.status} after ${(a.ms / 1000).toFixed(1)} s: ${message}`);
    }
    if (phase === 'rows') {
      if (!answersOverRows.has(key)) answersOverRows.set(key, a.text);
    } else {
      const before = answersOverRows.get(key);
      if (before !== undefined) compared.add(key);
      if (before !== undefined && before !== a.text && !differing.includes(key))
        differing.push(key);
    }
    return a;
  };
  const guarded = async <T extends object>(
    fn: () => Promise<T>,
  ): Promise<T | { error: string }> => {
    try {
      return await fn();
    } catch (err) {
      const error = (err as Error).message.slice(0, 300);
      console.log(`${PHASE_LABEL[phase]}: ${error}`);
      return { error };
    }
  };

  const summaries = {} as Measured['summaries'];
  for (const interval of ['1d', '1h'] as const) {
    const summary = (basis: string) => async () =>
      (
        await post(`summary ${interval} ${basis}`, '/v1/sensors/logs/load', {
          sensorIds: ids,
          ...YEAR,
          interval,
          calculationBasis: basis,
        })
      ).ms;
    summaries[interval] = await guarded(async () => {
      const t = await inTurns(summary('eventWeighted'), summary('timeWeighted'), REPEAT, BUDGET_MS);
      const { text } = await post(`summary ${interval} timeWeighted`, '/v1/sensors/logs/load', {
        sensorIds: ids,
        ...YEAR,
        interval,
        calculationBasis: 'timeWeighted',
      });
      return { ew: t.a, tw: t.b, elements: (JSON.parse(text) as unknown[]).length };
    });
  }

  const plotBody = { sensorId: ids[0], ...YEAR, intervals: 1000 };
  let plotText = '';
  const plot = await guarded(async () => ({
    times: await timedRuns(
      async () => {
        const a = await post('plot', '/v1/sensors/logs/plot', plotBody);
        plotText = a.text;
        return a.ms;
      },
      REPEAT,
      BUDGET_MS,
    ),
    samples: (JSON.parse(plotText) as unknown[]).length,
  }));

  // The same from the raw rows in plain SQL: each part's first, last, lowest and highest sample.
  let plain: number[] | undefined;
  if (phase === 'rows') {
    const width = Math.floor((Date.parse(YEAR.end) - Date.parse(YEAR.start)) / 1000);
    plain = await timedRuns(async () => {
      const t0 = process.hrtime.bigint();
      await db.query(
        `SELECT part, (array_agg(ts ORDER BY ts))[1] AS first, (array_agg(ts ORDER BY ts DESC))[1] AS last,
                (array_agg(ts ORDER BY value, ts))[1] AS lo, (array_agg(ts ORDER BY value DESC, ts))[1] AS hi
           FROM (SELECT ts, value, least(999, floor((date_part('epoch', ts - $2::timestamptz) * 1000) / $4))::int AS part
                   FROM sensor_logs WHERE sensor_id = $1 AND ts >= $2 AND ts < $3) x
          GROUP BY part ORDER BY part`,
        [ids[0], YEAR.start, YEAR.end, width],
      );
      return msSince(t0);
    }, 5);
  }

  const interpolated = await guarded(async () => ({
    times: await timedRuns(
      async () =>
        (
          await post('interpolated times', '/v1/sensors/logs/interpolated', {
            sensorIds: ids,
            times,
          })
        ).ms,
      REPEAT,
      BUDGET_MS,
    ),
  }));
  let gridText = '';
  const grid = await guarded(async () => ({
    times: await timedRuns(
      async () => {
        const a = await post('interpolated grid', '/v1/sensors/logs/interpolated', gridBody);
        gridText = a.text;
        return a.ms;
      },
      REPEAT,
      BUDGET_MS,
    ),
    values: (JSON.parse(gridText) as unknown[]).length,
  }));
  return { summaries, plot, plain, interpolated, grid };
}

// Random instants over the year, the same in both phases.
const y0 = Date.parse(YEAR.start);
const times = Array.from({ length: 1000 }, () =>
  new Date(y0 + Math.floor(Math.random() * (Date.parse(YEAR.end) - y0))).toISOString(),
);
/** A week of June on a one-minute grid (or the first six days of a shorter year). */
const gridStart =
  Date.parse(YEAR.end) >= Date.parse('2025-06-07T00:00:00Z') ? '2025-06-01T00:00:00Z' : YEAR.start;
const gridBody = {
  sensorIds: ids,
  start: gridStart,
  end: new Date(Math.min(Date.parse(gridStart) + 6 * DAY, Date.parse(YEAR.end))).toISOString(),
  interval: '1m' as const,
  timeZone: 'Europe/Berlin',
};

/** The table of one phase's figures. */
function table(phase: Phase, m: Measured, plainRows: number[] | undefined): string[] {
  const rows: string[][] = [];
  const err = (label: string, e: { error: string }) =>
    rows.push([label, `error: ${e.error}`, '-', '']);
  const n = (t: number[]) =>
    t.length < REPEAT ? ` (${t.length} timed, within BENCH_BUDGET_S)` : '';
  for (const interval of ['1d', '1h'] as const) {
    const label = `${interval === '1d' ? 'daily' : 'hourly'} summary, 10 sensors, a year`;
    const s = m.summaries[interval];
    if ('error' in s) {
      err(label, s);
      continue;
    }
    rows.push([`${label}: eventWeighted${n(s.ew)}`, fig(pct(s.ew, 50)), fig(pct(s.ew, 99)), '']);
    rows.push([
      `${label}: timeWeighted (${s.elements} elements)`,
      fig(pct(s.tw, 50)),
      fig(pct(s.tw, 99)),
      `${(pct(s.tw, 50) / pct(s.ew, 50)).toFixed(2)} × eventWeighted (target ≤ 1.5 ×)`,
    ]);
  }
  const plotLabel = 'plot values, one sensor, a year, 1,000 intervals';
  if ('error' in m.plot) err(plotLabel, m.plot);
  else {
    const p50 = pct(m.plot.times, 50);
    rows.push([
      `${plotLabel} (${m.plot.samples} samples)${n(m.plot.times)}`,
      fig(p50),
      fig(pct(m.plot.times, 99)),
      `target p50 ≤ 50 ms; ${plainRows ? `${(pct(plainRows, 50) / p50).toFixed(1)} × faster than plain SQL on the raw rows${phase === 'archived' ? ' (timed over rows, before the pass)' : ''} (target ≥ 10 ×)` : 'no plain SQL figure (no rows phase)'}`,
    ]);
  }
  if (m.plain)
    rows.push([
      'plain SQL on the raw rows (in the database, no HTTP)',
      fig(pct(m.plain, 50)),
      fig(pct(m.plain, 99)),
      '',
    ]);
  const interpLabel = '10,000 interpolated values (10 sensors × 1,000 random times over the year)';
  if ('error' in m.interpolated) err(interpLabel, m.interpolated);
  else
    rows.push([
      `${interpLabel}${n(m.interpolated.times)}`,
      fig(pct(m.interpolated.times, 50)),
      fig(pct(m.interpolated.times, 99)),
      'target p50 ≤ 100 ms',
    ]);
  const gridLabel = 'interpolated values on a one-minute grid (10 sensors × six days)';
  if ('error' in m.grid) err(gridLabel, m.grid);
  else
    rows.push([
      `${m.grid.values} ${gridLabel}${n(m.grid.times)}`,
      fig(pct(m.grid.times, 50)),
      fig(pct(m.grid.times, 99)),
      '',
    ]);
  return [
    '| figure | p50 | p99 | against the target |',
    '|---|---|---|---|',
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ];
}

/** Each target's figure and verdict in a phase. */
function verdicts(m: Measured | undefined, plainRows: number[] | undefined): string[] {
  if (!m) return Array(4).fill('not measured');
  const v = (ok: boolean) => (ok ? 'met' : '**not met**');
  const ratio = (interval: '1d' | '1h') => {
    const s = m.summaries[interval];
    if ('error' in s) return `**not met** (error: ${s.error.slice(0, 100)})`;
    const [ew, tw] = [pct(s.ew, 50), pct(s.tw, 50)];
    return `${(tw / ew).toFixed(2)} × (${tw.toFixed(1)} against ${ew.toFixed(1)} ms): ${v(tw / ew <= 1.5)}`;
  };
  let plot: string;
  if ('error' in m.plot) plot = `**not met** (error: ${m.plot.error.slice(0, 100)})`;
  else {
    const p50 = pct(m.plot.times, 50);
    const x = plainRows ? pct(plainRows, 50) / p50 : NaN;
    plot = plainRows
      ? `${p50.toFixed(1)} ms, ${x.toFixed(1)} × (plain SQL on the rows ${pct(plainRows, 50).toFixed(1)} ms): ${v(p50 <= 50 && x >= 10)}`
      : `${p50.toFixed(1)} ms (no plain SQL figure): ${p50 <= 50 ? 'p50 met, ratio not measured' : '**not met**'}`;
  }
  const interp =
    'error' in m.interpolated
      ? `**not met** (error: ${m.interpolated.error.slice(0, 100)})`
      : `${pct(m.interpolated.times, 50).toFixed(1)} ms: ${v(pct(m.interpolated.times, 50) <= 100)}`;
  return [ratio('1d'), ratio('1h'), plot, interp];
}

/** The most an engine call may take while its queries are collected for plans. */
const PLAN_MS = 20_000;

/**
 * Plans on the never-analyzed tables (issue 21): every query the three engines send, EXPLAINed (each
 * text once per engine call, at most 30 of them: over archived days an engine may send one per day;
 * and only those sent in its first PLAN_MS).
 */
async function plans(db: Database, phase: Phase) {
  const seen: [string, string, unknown[]][] = [];
  const cap = new Error('enough queries seen');
  let label = '';
  let since = 0;
  // Each statement at most PLAN_MS, and each engine call's statements stop being sent after PLAN_MS:
  // over archived days one may take minutes, and its plans are what is wanted.
  const bounded = db.bounded(PLAN_MS);
  const spy: Queryable = {
    query: (sql, params, opts) => {
      if (performance.now() - since > PLAN_MS) return Promise.reject(cap);
      if (/_logs|_log_days|_rollups|rollup_dirty/.test(sql)) {
        if (!seen.some(([l, s]) => l === label && s === sql)) {
          if (seen.filter(([l]) => l === label).length >= 30) return Promise.reject(cap);
          seen.push([label, sql, params ?? []]);
        }
      }
      return bounded.query(sql, params, opts);
    },
  };
  const access = new Access({
    clientId: 'bench',
    siteIds: null,
    cameraIds: null,
    admin: true,
    role: 'full',
  } as unknown as Client);
  const run = async (what: string, fn: () => Promise<unknown>) => {
    label = what;
    since = performance.now();
    try {
      await fn();
    } catch (err) {
      if (err !== cap) console.log(`plans, ${what}: ${(err as Error).message.slice(0, 200)}`);
    }
    const s = (performance.now() - since) / 1000;
    if (s > 5) console.log(`plans, ${what}: its queries took ${s.toFixed(1)} s in this process`);
  };
  const drain = async (d: { pages: AsyncIterator<unknown> }) => {
    while (!(await d.pages.next()).done);
  };
  const y = { start: Date.parse(YEAR.start), end: Date.parse(YEAR.end), zone: 'UTC' };
  await run('timeWeighted 1d', () =>
    queryTimeWeighted(spy, 'sensor', { ids, ...y, interval: '1d' }),
  );
  await run('timeWeighted 1h Europe/Berlin', () =>
    queryTimeWeighted(spy, 'sensor', { ids, ...y, interval: '1h', zone: 'Europe/Berlin' }),
  );
  await run('plot', async () =>
    drain(await openPlot(spy, access, { sensorId: ids[0], ...YEAR, intervals: 1000 })),
  );
  await run('interpolated times', async () =>
    drain(await openInterpolated(spy, access, { sensorIds: ids, times })),
  );
  await run('interpolated grid', async () => drain(await openInterpolated(spy, access, gridBody)));
  say('');
  say(
    `Plans of the engines' queries ${PHASE_LABEL[phase]}, on the never-analyzed tables (EXPLAIN; whole plans in the result file):`,
  );
  for (const [what, sql, params] of seen) {
    const plan = (await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params)).map(
      (r) => r['QUERY PLAN'],
    );
    toRecord(`\n-- ${PHASE_LABEL[phase]}: ${what}\n${plan.join('\n')}\n`);
    const sorts = plan.filter((l) => /\bSort\b/.test(l) && !/Sort Key|Sort Method/.test(l)).length;
    const bitmaps = plan.filter((l) => /Bitmap/.test(l)).length;
    const seqLogs = plan.filter((l) =>
      /Seq Scan on (sensor_logs|sensor_rollups|sensor_log_days)/.test(l),
    ).length;
    say(
      `- ${what}: ${plan.length} plan lines; Sort nodes ${sorts}, Bitmap nodes ${bitmaps}, sequential scans of logs, archived days or rollups ${seqLogs}`,
    );
  }
}

async function main() {
  await record('historian', { postgres: DB_URL });
  say(machineLine());
  say(
    `Command: \`npx tsx bench/historian.ts\` (server in a child process; requests over HTTP, one at a time; the event- and time-weighted summaries of each interval timed in turns; ${PHASES.map((p) => PHASE_LABEL[p]).join(', then ')}).`,
  );
  await onPostgres(
    DB_URL,
    'historian',
    async (db, env, { schema, reused }) => {
      const [held] = await (reused
        ? db.query<{ rows: number; days: number }>(
            `SELECT (SELECT count(*)::int FROM sensor_logs) AS rows, (SELECT count(*)::int FROM sensor_log_days) AS days`,
          )
        : Promise.resolve([{ rows: 0, days: 0 }]));
      if (reused) {
        say(
          `Data: ${held.rows.toLocaleString('en-US')} rows and ${held.days.toLocaleString('en-US')} archived sensor-days of schema ${schema}, loaded by an earlier run (BENCH_SCHEMA); tables never analyzed by the bench.`,
        );
        if (held.days > 0 && PHASES.includes('rows'))
          throw new Error(
            `schema ${schema} is archived already: only BENCH_ARCHIVED=only can measure it`,
          );
      } else await load(db);
      const until = archiveUntil(Date.now(), AFTER_DAYS);
      if (PHASES.includes('archived') && Date.parse(YEAR.end) > until)
        throw new Error(
          `the year must end before ${new Date(until).toISOString()} (ARCHIVE_AFTER_DAYS=${AFTER_DAYS})`,
        );
      say('');

      // The server's own pass off: the bench's pass moves the days when the rows phase is done.
      const api = await startApi({ ...env, ARCHIVE_AFTER_DAYS: '0' });
      const measured: Partial<Record<Phase, Measured>> = {};
      let plain: number[] | undefined;
      try {
        for (const phase of PHASES) {
          if (phase === 'archived') {
            if (held.days === 0) {
              const pass = await archivePass(db, AFTER_DAYS);
              say('');
              say(
                `The archive pass (runArchive in the bench's process, ARCHIVE_AFTER_DAYS=${AFTER_DAYS}, the server answering nothing meanwhile) took ${(pass.ms / 1000).toFixed(1)} s: ${pass.sensorDays.toLocaleString('en-US')} sensor-days archived (of ${(ids.length * YEAR_DAYS).toLocaleString('en-US')}). Its report:`,
              );
              for (const l of pass.lines) say(`- ${l}`);
              if (pass.sensorDays !== ids.length * YEAR_DAYS)
                throw new Error(
                  `the pass archived ${pass.sensorDays} sensor-days of ${ids.length * YEAR_DAYS}`,
                );
            }
            const [left] = await db.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM sensor_logs WHERE sensor_id = ANY($1::int[])`,
              [ids],
            );
            if (left.n) throw new Error(`${left.n} logs of the year are still rows after the pass`);
          }
          console.log(`measuring ${PHASE_LABEL[phase]}…`);
          const m = await measure(api, db, phase);
          measured[phase] = m;
          plain ??= m.plain;
          say('');
          say(`Figures ${PHASE_LABEL[phase]}:`);
          say('');
          for (const l of table(phase, m, plain)) say(l);
          await plans(db, phase);
        }
      } finally {
        await api.stop();
      }

      if (measured.archived && measured.rows)
        say(
          `\nEach answer over archived days compared with the same request's over rows (the first of each): ${compared.size} requests compared (${[...compared].join(', ')}), ${differing.length ? `**different**: ${differing.join(', ')}` : 'identical bytes, every one'}${compared.size < answersOverRows.size ? `; not compared (no answer over archived days): ${[...answersOverRows.keys()].filter((k) => !compared.has(k)).join(', ')}` : ''}.`,
        );
      const targets = [
        'time-weighted daily summary ≤ 1.5 × event-weighted',
        'time-weighted hourly summary ≤ 1.5 × event-weighted',
        'plot values of a year in 1,000 parts: p50 ≤ 50 ms, ≥ 10 × plain SQL',
        '10,000 interpolated values: p50 ≤ 100 ms',
      ];
      const columns = PHASES.map((p) => verdicts(measured[p], plain));
      say('');
      say(`| target | ${PHASES.map((p) => PHASE_LABEL[p]).join(' | ')} |`);
      say(`|---|${PHASES.map(() => '---|').join('')}`);
      targets.forEach((t, i) => say(`| ${t} | ${columns.map((c) => c[i]).join(' | ')} |`));
      if (measured.archived)
        say(
          '\nOver archived days the plot is compared with plain SQL on the raw rows, timed before the pass (plain SQL has no rows to read after it).',
        );
      say('');
      say(loadAfterLine());
    },
    { keep: process.env.BENCH_SCHEMA, open: { statementTimeoutMs: 3_600_000 } },
  );
  reportSection('Historian', lines.join('\n'));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
