// Archive benchmark (issue 37): what reading and writing archived days costs. 10 sensors × 60 days of
// one-minute logs ending 40 days ago, on PostgreSQL with tables never analyzed (no manual VACUUM or
// ANALYZE). Sensors 1–5 are archived by the service's pass (runArchive, on the database directly);
// sensors 6–10 are loaded afterwards with the same values and stay rows: each archived sensor has a
// rows twin. The real server in a child process (ARCHIVE_AFTER_DAYS=35), requests over HTTP, one at a
// time, each figure against its twin's in turns. The server's own pass (a minute after its start,
// whatever ARCHIVE_INTERVAL_MS) would archive the twins: this process holds the pass's lock meanwhile.
// The figures:
// 1. the raw logs of one month (30 days) of an archived sensor and of its twin, JSON and CSV;
// 2. late batches of 1,000 new records (30 s after stored minutes) into archived equipment-days, each
//    one not touched before (so each upload moves its day back to rows first), and the same into days
//    of the twins (rows);
// 3. the log and archive tables' bytes before and after the pass (its report).
// Every answer is checked (the month's every log, `stored: 1000`): an answer that misses logs is
// reported as an error, not as a figure.
//   npx tsx bench/archive.ts
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), BENCH_REPEAT downloads
// of each (default 15), BENCH_LATE late batches of each (default 40), BENCH_DAYS fewer days for a
// trial (the month is then all of them, at most 30). Uses a schema of its own, dropped after.
import type { Database } from '../src/db/index.js';
import { markAll, rebuildAll, refreshAll } from '../src/telemetry/rollups/refresh.js';
import { UNITS } from '../src/telemetry/rollups/units.js';
import {
  archivePass,
  holdArchiveLock,
  inTurns,
  loadAfterLine,
  machineLine,
  msSince as ms,
  onPostgres,
  percentile as pct,
  provisionSensors,
  reportLines,
  reportSection,
  startApi,
  type Api,
} from './harness.js';
import { record } from './record.js';

const DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REPEAT = Number(process.env.BENCH_REPEAT ?? 15);
const LATE = Number(process.env.BENCH_LATE ?? 40);
const DAYS = Number(process.env.BENCH_DAYS ?? 60);
const MONTH_DAYS = Math.min(30, DAYS);
const AFTER_DAYS = 35;
const DAY = 86_400_000;
const MINUTE = 60_000;
const BATCH = 1000;
/** The demo's sensors: 1–5 archived, 6–10 their rows twins (the same values). */
const ARCHIVED = [10100, 10101, 10102, 10103, 10104];
const TWINS = ARCHIVED.map((id) => id + 5);
const END = Math.floor(Date.now() / DAY) * DAY - 40 * DAY;
const START = END - DAYS * DAY;
const MONTH = { start: START, end: START + MONTH_DAYS * DAY };
const MONTH_LOGS = MONTH_DAYS * 1440;

const { lines, say } = reportLines();
const iso = (t: number) => new Date(t).toISOString();
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const fig = (x: number) => `${x.toFixed(1)} ms`;

/**
 * One-minute logs of the sensors over [START, END), in time order, every sensor's interleaved (as
 * gateways send them): a drifting level with noise at two decimals, the same for a sensor and its
 * twin (its place among the five).
 */
async function load(db: Database, ids: number[]) {
  await db.query(
    `INSERT INTO sensor_logs (sensor_id, ts, value)
       SELECT s.id, g.ts, round((50 + 20 * sin(x.e / 86400 + x.k) + 3 * sin(x.e / 5400)
                                 + mod((abs(sin(x.k * 12.9898 + x.e / 60 * 78.233)) * 43758.5453)::numeric, 1))::numeric, 2)::float8
         FROM generate_series($2::timestamptz, $3::timestamptz - interval '1 minute', interval '1 minute') AS g(ts)
        CROSS JOIN unnest($1::int[]) AS s(id)
        CROSS JOIN LATERAL (SELECT date_part('epoch', g.ts) AS e, (s.id - ${ARCHIVED[0]}) % 5 AS k) x
        ORDER BY g.ts, s.id`,
    [ids, iso(START), iso(END)],
  );
}

async function main() {
  await record('archive', { postgres: DB_URL });
  say(machineLine());
  say(
    `Command: \`npx tsx bench/archive.ts\` (server in a child process with ARCHIVE_AFTER_DAYS=${AFTER_DAYS}; requests over HTTP, one at a time; each archived figure timed in turns with its rows twin's).`,
  );
  await onPostgres(DB_URL, 'archive', (db, env, { schema }) => run(db, env, schema), {
    open: { statementTimeoutMs: 3_600_000, max: 2 },
  });
  reportSection('Archive', lines.join('\n'));
}

async function run(db: Database, env: { DATABASE_URL: string }, schema: string) {
  await provisionSensors(db);

  // ---- sensors 1–5: loaded, rolled up, archived by the pass ----
  let t0 = process.hrtime.bigint();
  await load(db, ARCHIVED);
  const loadA = ms(t0);
  t0 = process.hrtime.bigint();
  await rebuildAll(db);
  const rollA = ms(t0);
  const pass = await archivePass(db, AFTER_DAYS);
  const { report, ms: passMs, sensorDays: archivedDays } = pass;
  if (archivedDays !== ARCHIVED.length * DAYS)
    throw new Error(
      `the pass archived ${archivedDays} sensor-days of ${ARCHIVED.length * DAYS}: ${pass.lines.join('; ')}`,
    );

  // ---- sensors 6–10: the same values, loaded after the pass, so they stay rows ----
  t0 = process.hrtime.bigint();
  await load(db, TWINS);
  const loadR = ms(t0);
  t0 = process.hrtime.bigint();
  await markAll(db, UNITS.sensor, { from: START, to: END });
  await refreshAll(db);
  const rollR = ms(t0);
  const [held] = await db.query<{ rows_a: number; days_a: number; rows_r: number }>(
    `SELECT (SELECT count(*)::int FROM sensor_logs WHERE sensor_id = ANY($1::int[])) AS rows_a,
              (SELECT count(*)::int FROM sensor_log_days WHERE sensor_id = ANY($1::int[])) AS days_a,
              (SELECT count(*)::int FROM sensor_logs WHERE sensor_id = ANY($2::int[])) AS rows_r`,
    [ARCHIVED, TWINS],
  );
  const perSensor = DAYS * 1440;
  if (
    held.rows_a !== 0 ||
    held.days_a !== ARCHIVED.length * DAYS ||
    held.rows_r !== TWINS.length * perSensor
  )
    throw new Error(`data not as loaded: ${JSON.stringify(held)}`);
  say(
    `Data: 10 demo sensors × ${DAYS} days of one-minute logs (${iso(START).slice(0, 10)} to ${iso(END).slice(0, 10)}, ending 40 days ago), ${int(10 * perSensor)} logs. Sensors ${ARCHIVED[0]}–${ARCHIVED.at(-1)}: loaded in ${(loadA / 1000).toFixed(1)} s (one INSERT … SELECT, time order), rollups by rebuildAll in ${(rollA / 1000).toFixed(1)} s, then archived by the pass (runArchive, ${AFTER_DAYS} days) in ${(passMs / 1000).toFixed(1)} s: ${int(archivedDays)} sensor-days. Sensors ${TWINS[0]}–${TWINS.at(-1)} (rows twins, the same values): loaded after the pass in ${(loadR / 1000).toFixed(1)} s, rollups by refreshAll in ${(rollR / 1000).toFixed(1)} s. Tables never analyzed.`,
  );

  // The server's own pass (a minute after start) must not archive the twins: this process holds the
  // pass's lock for the whole run, so that pass finds another under way and does nothing.
  const release = await holdArchiveLock(DB_URL, db, schema);
  let api: Api | undefined;
  try {
    api = await startApi({
      ...env,
      ARCHIVE_AFTER_DAYS: String(AFTER_DAYS),
      ARCHIVE_INTERVAL_MS: '86400000',
    });
    const post = api.post;

    // ---- 1. raw logs of a month: archived sensor against its rows twin ----
    const rawErrors = new Map<string, string>();
    const monthBody = (sensorId: number) =>
      JSON.stringify({ sensorId, start: iso(MONTH.start), end: iso(MONTH.end) });
    /** The logs an answer holds (-1: not a 200). */
    const logsIn = (status: number, text: string, format: 'json' | 'csv') =>
      status !== 200
        ? -1
        : format === 'json'
          ? (JSON.parse(text) as unknown[]).length
          : text.split('\r\n').filter(Boolean).length - 1;
    /** The raw logs of the month; returns the request's milliseconds. An answer missing logs is kept as the series' error. */
    const raw = (sensorId: number, format: 'json' | 'csv', key: string) => async () => {
      const body = monthBody(sensorId);
      const {
        status,
        text,
        ms: t,
      } = await post(
        '/v1/sensors/logs/raw',
        body,
        format === 'csv' ? 'text/csv' : 'application/json',
      );
      const n = logsIn(status, text, format);
      if (n !== MONTH_LOGS && !rawErrors.has(key))
        rawErrors.set(
          key,
          status === 200
            ? `answered ${int(n)} logs of ${int(MONTH_LOGS)}`
            : `${status} ${text.slice(0, 200)}`,
        );
      return t;
    };
    // Once, untimed: the archived sensor's answer holds the same times and values as its twin's.
    const same = async () => {
      const [a, b] = [
        await post('/v1/sensors/logs/raw', monthBody(ARCHIVED[0])),
        await post('/v1/sensors/logs/raw', monthBody(TWINS[0])),
      ];
      const [na, nb] = [logsIn(a.status, a.text, 'json'), logsIn(b.status, b.text, 'json')];
      if (na !== MONTH_LOGS || nb !== MONTH_LOGS)
        return `not compared: ${int(na)} and ${int(nb)} logs answered of ${int(MONTH_LOGS)}`;
      const strip = (text: string) =>
        (JSON.parse(text) as { value: number; timestamp: string }[])
          .map((r) => `${r.timestamp} ${r.value}`)
          .join('\n');
      return strip(a.text) === strip(b.text) ? 'identical' : 'DIFFERENT';
    };
    const identical = await same();
    const rows: [string, string, string, string][] = [];
    const rawRatios: { format: string; ratio?: number; error?: string }[] = [];
    for (const format of ['json', 'csv'] as const) {
      const t = await inTurns(
        raw(ARCHIVED[0], format, `archived ${format}`),
        raw(TWINS[0], format, `rows ${format}`),
        REPEAT,
      );
      const ea = rawErrors.get(`archived ${format}`);
      const eb = rawErrors.get(`rows ${format}`);
      const [pa, pb] = [pct(t.a, 50), pct(t.b, 50)];
      const label = `raw logs of a month (${MONTH_DAYS} days, ${int(MONTH_LOGS)} logs), ${format.toUpperCase()}`;
      rows.push([
        `${label}: archived sensor ${ARCHIVED[0]}`,
        ea ? `error: ${ea}` : fig(pa),
        ea ? '-' : fig(pct(t.a, 99)),
        ea || eb ? '' : `${(pa / pb).toFixed(2)} × its rows twin's`,
      ]);
      rows.push([
        `${label}: rows twin ${TWINS[0]}`,
        eb ? `error: ${eb}` : fig(pb),
        eb ? '-' : fig(pct(t.b, 99)),
        '',
      ]);
      rawRatios.push(ea || eb ? { format, error: (ea ?? eb)! } : { format, ratio: pa / pb });
    }

    // ---- 2. late batches of 1,000 new records into archived days, and into rows days ----
    // Equipment-days not touched before, the days after the month first (then the month's: the
    // downloads are done); one of each for the warm-up.
    const order = [
      ...Array.from({ length: DAYS - MONTH_DAYS }, (_, d) => MONTH_DAYS + d),
      ...Array.from({ length: MONTH_DAYS }, (_, d) => d),
    ];
    const slots = order.flatMap((d) => ARCHIVED.map((_, i) => ({ i, day: START + d * DAY })));
    const late = Math.min(LATE, slots.length - 1);
    const lateErrors = new Map<string, string>();
    const answers = { archived: 0, rows: 0 };
    const bodies = (ids: number[]) =>
      slots.slice(0, late + 1).map(({ i, day }) => ({
        what: `${ids[i]}, ${iso(day).slice(0, 10)}`,
        body: JSON.stringify(
          Array.from({ length: BATCH }, (_, m) => ({
            sensorID: ids[i],
            timestamp: iso(day + m * MINUTE + 30_000),
            value: Math.round((50 + 20 * Math.sin(m / 100 + i)) * 100) / 100,
          })),
        ),
      }));
    const made = { archived: bodies(ARCHIVED), rows: bodies(TWINS) };
    /** The next batch into a day not touched before; returns the request's milliseconds (to the 201). */
    const batch = (which: 'archived' | 'rows') => async () => {
      const { what, body } = made[which][answers[which]];
      const { status, text, ms: t } = await post('/v1/edge/logs/sensor/batch', body);
      answers[which]++;
      let ok = false;
      try {
        const r = JSON.parse(text) as { received: number; stored: number; duplicates: number };
        ok = status === 201 && r.received === BATCH && r.stored === BATCH && r.duplicates === 0;
      } catch {
        // not an upload's answer
      }
      if (!ok && !lateErrors.has(which))
        lateErrors.set(which, `${status} ${text.slice(0, 200)} (${what})`);
      return t;
    };
    const lt = await inTurns(batch('archived'), batch('rows'), late);
    const [ra] = await db.query<{ left: number; twins: number }>(
      `SELECT (SELECT count(*)::int FROM sensor_log_days WHERE sensor_id = ANY($1::int[])) AS left,
              (SELECT count(*)::int FROM sensor_log_days WHERE sensor_id = ANY($2::int[])) AS twins`,
      [ARCHIVED, TWINS],
    );
    // Each archived upload moved its day back to rows (warm-up included): that many days left the archive.
    if (ra.left !== ARCHIVED.length * DAYS - answers.archived && !lateErrors.has('archived'))
      lateErrors.set(
        'archived',
        `${ARCHIVED.length * DAYS - ra.left} days left the archive after ${answers.archived} uploads`,
      );
    const la = lateErrors.get('archived');
    const lr = lateErrors.get('rows');
    const lateP50 = pct(lt.a, 50);
    rows.push([
      `late batch of ${int(BATCH)} records into an archived sensor-day (it moves back to rows), ${late} batches`,
      la ? `error: ${la}` : fig(lateP50),
      la ? '-' : fig(pct(lt.a, 99)),
      la || lr ? '' : `${(lateP50 / pct(lt.b, 50)).toFixed(2)} × into rows days`,
    ]);
    rows.push([
      `late batch of ${int(BATCH)} records into a rows sensor-day, ${late} batches`,
      lr ? `error: ${lr}` : fig(pct(lt.b, 50)),
      lr ? '-' : fig(pct(lt.b, 99)),
      '',
    ]);

    await api.stop();
    api = undefined;

    // ---- report ----
    say('');
    say(
      `Raw logs of the month of archived sensor ${ARCHIVED[0]} and of its twin ${TWINS[0]} compared (times and values): ${identical}.`,
    );
    say(
      `The twins' days stayed rows for the whole run (archived days of sensors ${TWINS[0]}–${TWINS.at(-1)} at the end: ${ra.twins}).`,
    );
    say('');
    say('| figure | p50 | p99 | compared |');
    say('|---|---|---|---|');
    for (const r of rows) say(`| ${r.join(' | ')} |`);
    say('');
    say(`The archive pass over sensors ${ARCHIVED[0]}–${ARCHIVED.at(-1)} (its report):`);
    for (const l of pass.lines) say(`- ${l}`);
    say('');
    say('| target | figure | |');
    say('|---|---|---|');
    for (const r of rawRatios)
      say(
        `| raw download of an archived month at least as fast as from rows, ${r.format.toUpperCase()} (p50 ratio ≤ 1) | ${r.error ? `error: ${r.error}` : `${r.ratio!.toFixed(2)} ×`} | ${r.error ? 'not met (error)' : r.ratio! <= 1 ? 'met' : 'not met'} |`,
      );
    say(
      `| a late batch of ${int(BATCH)} records into archived days: p50 ≤ 50 ms | ${la ? `error: ${la}` : fig(lateP50)} | ${la ? 'not met (error)' : lateP50 <= 50 ? 'met' : 'not met'} |`,
    );
    const k = report.kinds.find((x) => x.kind === 'sensor');
    say(
      `| bytes (the pass's report; at the pass, only sensors ${ARCHIVED[0]}–${ARCHIVED.at(-1)} were loaded) | logs ${k ? `${(k.rowBytes / k.logs).toFixed(1)} B a log as rows, ${(k.archiveBytes / k.logs).toFixed(2)} archived` : '-'}; log and archive tables ${(report.tableBytes.before / 1048576).toFixed(1)} MB before, ${(report.tableBytes.after / 1048576).toFixed(1)} MB after | (measured) |`,
    );
    say('');
    say(loadAfterLine());
  } finally {
    await api?.stop();
    await release();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
