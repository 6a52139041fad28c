import { afterAll, beforeAll, expect, it } from 'vitest';
import { Access } from '../../src/auth/access.js';
import type { Database, Queryable } from '../../src/db/index.js';
import type { QueryOptions, Transaction } from '../../src/db/types.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { readEvents } from '../../src/stream/events.js';
import { moveDaySql } from '../../src/telemetry/archive/days.js';
import { anyArchivedSql } from '../../src/telemetry/archive/upload-days.js';
import { openRawSensorLogs, rawSpans } from '../../src/telemetry/download/raw.js';
import { openInterpolated } from '../../src/telemetry/download/interpolated.js';
import { openPlot } from '../../src/telemetry/download/plot.js';
import { querySummaries } from '../../src/telemetry/download/summaries.js';
import { queryTimeWeighted } from '../../src/telemetry/download/time-weighted.js';
import { Partitions } from '../../src/telemetry/partitions.js';
import { markAll, rebuildAll, refreshMarked } from '../../src/telemetry/rollups/refresh.js';
import { UNITS } from '../../src/telemetry/rollups/units.js';
import { changeLogPages } from '../../src/transactions/change-logs.js';
import { transactionPages } from '../../src/transactions/logs.js';
import { makeJob } from '../../src/telemetry/jobs.js';
import type { Entry } from '../../src/telemetry/kinds.js';
import { buildStatement } from '../../src/telemetry/statement.js';
import { acknowledgeAlarms } from '../../src/alarms/actions.js';
import { expireShelves } from '../../src/alarms/expiry.js';
import { alarmKpis } from '../../src/alarms/kpis.js';
import { listAlarms, listJournal } from '../../src/alarms/list.js';
import { listActive, markResolved } from '../../src/alarms/store.js';
import { claimDue, settle } from '../../src/alarms/notify/deliver.js';
import { runDueSteps } from '../../src/alarms/notify/schedule.js';
import { evaluatePass } from '../../src/alarms/rules/evaluator.js';
import { describeWith, openTestDb } from '../helper.js';
import { SENSOR, SENSOR_2 } from '../telemetry/fixtures.js';

// Plans that do not depend on statistics (PostgreSQL only: PGlite has the same planner, but this
// checks what a server with autovacuum off, a new partition or a bulk load gives). The telemetry
// tables are loaded and never analyzed, then each request-path and background query of the
// downloads, summaries, historian routes, transactions, stream follower and rollup refresher is run through EXPLAIN
// ANALYZE as the service sends it, and every plan is checked against the rows the query needs: no
// node may read or sort more than that (a page of 5,000 rows is never a sort of the whole range).

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

interface Explained {
  sql: string;
  plan: PlanNode;
}

/** Every node of a plan. */
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
/** Rows a node handled over all its loops: returned and filtered out. */
const handled = (n: PlanNode) =>
  (n['Actual Rows'] +
    (n['Rows Removed by Filter'] ?? 0) +
    (n['Rows Removed by Join Filter'] ?? 0) +
    (n['Rows Removed by Index Recheck'] ?? 0)) *
  n['Actual Loops'];
const TELEMETRY =
  /^(sensor|meter|pump|tank)_(logs|rollups)|^rollup_dirty$|^stream_events$|^transaction|^site_alarms$|^alarm_journal$/;

/** Rows of sensor_logs (any partition) the plans handled. */
const logRowsOf = (plans: Explained[]) =>
  plans
    .flatMap((p) => nodes(p.plan))
    .filter((n) => n['Relation Name']?.startsWith('sensor_logs'))
    .reduce((sum, n) => sum + handled(n), 0);

/**
 * The nodes of the plans that handled more than `most` rows of a telemetry, stream or transaction
 * table, or sorted more than `most` rows, or scanned by bitmap or sequentially more than `most`.
 */
function overspent(plans: Explained[], most: number) {
  return plans.flatMap((p) =>
    nodes(p.plan)
      .filter(
        (n) =>
          (n['Relation Name'] && TELEMETRY.test(n['Relation Name']) && handled(n) > most) ||
          (/Sort|Bitmap|Seq Scan|CTE Scan|Nested Loop/.test(n['Node Type']) && handled(n) > most),
      )
      .map(
        (n) =>
          `${n['Node Type']} ${n['Relation Name'] ?? ''} ${handled(n)} rows in: ${p.sql.slice(0, 160)}`,
      ),
  );
}

/**
 * The database, with every statement first run through EXPLAIN ANALYZE with the same options (and
 * rolled back: a DELETE or INSERT is then run for real). Plans are collected in `plans`.
 */
function explaining(db: Database, plans: Explained[]): Database {
  const explain = async (q: Queryable, sql: string, params?: unknown[], options?: QueryOptions) => {
    if (options?.prepared) {
      // As a named prepared statement is run once it has been run a few times: its generic plan.
      await q.query(`PREPARE plan_check AS ${sql}`);
      try {
        await q.query('SET LOCAL plan_cache_mode = force_generic_plan');
        const [row] = await q.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
          `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE plan_check(${(params ?? []).map(literal).join(', ')})`,
        );
        plans.push({ sql, plan: row['QUERY PLAN'][0].Plan });
      } finally {
        await q.query('DEALLOCATE plan_check');
      }
      return;
    }
    const [row] = await q.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
      params,
      { indexOrder: options?.indexOrder },
    );
    plans.push({ sql, plan: row['QUERY PLAN'][0].Plan });
  };
  const inTx = (tx: Transaction): Transaction => ({
    ...tx,
    async query(sql, params, options) {
      await tx.query('SAVEPOINT plan');
      await explain(tx, sql, params, options);
      await tx.query('ROLLBACK TO SAVEPOINT plan');
      return tx.query(sql, params, options);
    },
  });
  const rolledBack = new Error('rolled back');
  return {
    ...db,
    async query(sql, params, options) {
      await db
        .transaction(async (tx) => {
          await explain(tx, sql, params, options);
          throw rolledBack;
        })
        .catch((err: unknown) => {
          if (err !== rolledBack) throw err;
        });
      return db.query(sql, params, options);
    },
    transaction: (fn) => db.transaction((tx) => fn(inTx(tx))),
    snapshot: (fn) => db.snapshot((tx) => fn(inTx(tx as Transaction))),
  };
}

/** A statement parameter as an SQL literal (arrays of text as PostgreSQL's array text). */
function literal(value: unknown): string {
  const text = Array.isArray(value)
    ? `{${value.map((v) => (v === null ? 'NULL' : `"${String(v).replace(/[\\"]/g, '\\$&')}"`)).join(',')}}`
    : String(value);
  return `'${text.replace(/'/g, "''")}'`;
}

const everything = new Access({
  clientId: 'plans',
  siteIds: null,
  cameraIds: null,
  admin: false,
  role: 'full',
  disabled: false,
});

describeWith(['postgres'], 'plans without statistics [postgres]', () => {
  let db: Database;
  // The first month that has a partition of its own: the service creates it at start, so it is the
  // newest kind of table, never analyzed.
  let month: number;
  const SECONDS = 1_000_000;

  beforeAll(async () => {
    db = await openTestDb('postgres');
    await importDocument(db, generateDemo());
    await new Partitions(db).cover(Date.now());
    const [first] = await db.query<{ ms: number }>(
      `SELECT date_part('epoch', min(month)) * 1000 AS ms FROM telemetry_months`,
    );
    month = first.ms;
    // A million seconds of one sensor; a month of minutes of another, across two partitions.
    await db.query(
      `INSERT INTO sensor_logs (sensor_id, ts, value)
         SELECT $1, to_timestamp($2::float8 / 1000) + i * interval '1 second', i % 977 FROM generate_series(0, $3 - 1) i`,
      [SENSOR, month, SECONDS],
    );
    await db.query(
      `INSERT INTO sensor_logs (sensor_id, ts, value)
         SELECT $1, to_timestamp($2::float8 / 1000) + i * interval '1 minute', i % 61 FROM generate_series(0, 60 * 24 * 45) i`,
      [SENSOR_2, month],
    );
    await rebuildAll(db);
    // Stale quarters: an hour of the seconds sensor, read from its logs by summaries until refreshed.
    await markAll(db, UNITS.sensor, { from: month + 86_400_000, to: month + 90_000_000 });
    await db.query(
      `INSERT INTO stream_events (site_id, type, data) SELECT 1, 'reading', '{}' FROM generate_series(1, 200000)`,
    );
  }, 240_000);
  afterAll(async () => db?.close());

  it('the statistics are absent', async () => {
    const rows = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stats WHERE schemaname = current_schema() AND tablename LIKE 'sensor_%'`,
    );
    expect(rows[0].n).toBe(0);
  });

  it('a raw download reads each page by the index: its work follows the rows it returns', async () => {
    const plans: Explained[] = [];
    const start = month + 3_600_000;
    const end = month + 3_600_000 + 120_000_000; // 120,000 rows, 24 pages
    const download = await openRawSensorLogs(
      explaining(db, plans),
      everything,
      { sensorId: SENSOR, start: new Date(start).toISOString(), end: new Date(end).toISOString() },
      'csv',
    );
    let pages = 0;
    for await (const page of { [Symbol.asyncIterator]: () => download.pages }) {
      expect(page).toBeTruthy();
      pages++;
    }
    // 24 full pages, plus a short one where a span of days ends (raw.ts: rawSpans).
    const spans = await rawSpans(db, SENSOR, start, end);
    expect(pages).toBeGreaterThanOrEqual(24);
    expect(pages).toBeLessThanOrEqual(24 + spans.length - 1);
    const pagePlans = plans.filter((p) => p.sql.includes('sensor_logs'));
    expect(pagePlans.length).toBeGreaterThanOrEqual(pages);
    expect(overspent(pagePlans, 5_001)).toEqual([]);
  }, 120_000);

  it('summaries, event- and time-weighted, read rollups by key, and logs only for the edges and the stale quarters', async () => {
    for (const load of [querySummaries, queryTimeWeighted]) {
      for (const interval of ['15m', '1h', '1d'] as const) {
        for (const zone of ['UTC', 'Asia/Kolkata', 'America/St_Johns']) {
          const plans: Explained[] = [];
          // Cut inside quarters at both ends: 7 and 8 minutes of logs at the edges.
          const start = month + 8 * 60_000;
          const end = month + 40 * 86_400_000 + 7 * 60_000;
          const rows = await load(
            explaining(db, plans),
            'sensor',
            { ids: [SENSOR, SENSOR_2], start, end, interval, zone },
            'json',
          );
          expect(rows.map((r) => r.id)).toEqual([SENSOR, SENSOR_2]);
          // At most the units of the range: 40 days of quarters of two sensors (7,680), the logs of
          // the edges (8 + 7 minutes of seconds and of minutes) and of the four stale quarters (900
          // seconds each), merged once; time-weighted, one log before start and after end a sensor.
          expect(overspent(plans, 2 * 40 * 96 + 15 * 60 + 15 + 4 * 900 + 10)).toEqual([]);
          // Edges: 8 + 7 minutes of seconds (900) and of minutes (15); stale: 4 quarters of seconds.
          expect(logRowsOf(plans)).toBeLessThanOrEqual(15 * 60 + 15 + 4 * 900 + 10);
        }
      }
    }
  }, 180_000);

  it('summaries with stale quarters in many days: each quarter checked against the marks once, not against all of them', async () => {
    // One stale quarter at noon of each of 40 days, for both sensors (as late logs spread over
    // the range leave them): the days holding one are merged from their quarters.
    const marks = Array.from({ length: 40 }, (_, d) => month + (d + 2) * 86_400_000 + 43_200_000);
    await db.query(
      `INSERT INTO rollup_dirty (kind, equipment_id, bucket)
         SELECT 1, s, to_timestamp(b / 1000) FROM unnest($1::int[]) s, unnest($2::float8[]) b ON CONFLICT DO NOTHING`,
      [[SENSOR, SENSOR_2], marks],
    );
    try {
      for (const interval of ['1h', '1d'] as const) {
        const plans: Explained[] = [];
        const start = month;
        const end = month + 45 * 86_400_000;
        await querySummaries(
          explaining(db, plans),
          'sensor',
          { ids: [SENSOR, SENSOR_2], start, end, interval, zone: 'UTC' },
          'json',
        );
        // The units: 45 days of hours of two sensors, the quarters of the 40 stale days, and the
        // logs of the stale quarters (900 seconds or 15 minutes each, and the hour of markAll).
        const units = 2 * 45 * 24 + 2 * 41 * 96 + 41 * 900 + 40 * 15 + 4 * 900;
        expect(overspent(plans, units)).toEqual([]);
      }
    } finally {
      await db.query(
        `DELETE FROM rollup_dirty WHERE kind = 1 AND equipment_id = ANY($1::int[]) AND bucket = ANY($2::timestamptz[])`,
        [[SENSOR, SENSOR_2], marks.map((m) => new Date(m).toISOString())],
      );
    }
  }, 120_000);

  it('historian routes: plot values and interpolated values read by key', async () => {
    const start = month + 8 * 60_000;
    const end = month + 40 * 86_400_000 + 7 * 60_000;
    // Plot values of 40 days of minutes in 100 parts of 9.6 hours: rollups inside each part, logs
    // only at its edges inside a quarter (under 30 minutes a part), of the 57,600 logs in the range.
    const drain = async (d: { pages: AsyncIterator<unknown> }) => {
      let n = 0;
      for (let p = await d.pages.next(); !p.done; p = await d.pages.next())
        n += (p.value as unknown[]).length;
      return n;
    };
    const plotPlans: Explained[] = [];
    const iso = (t: number) => new Date(t).toISOString();
    const plot = await openPlot(explaining(db, plotPlans), everything, {
      sensorId: SENSOR_2,
      start: iso(start),
      end: iso(end),
      intervals: 100,
    });
    expect(await drain(plot)).toBeGreaterThan(200);
    expect(overspent(plotPlans, 100 * 30 + 100 * 15)).toEqual([]);
    expect(logRowsOf(plotPlans)).toBeLessThanOrEqual(100 * 30);
    // Interpolated values at 200 instants across both months, and on a one-minute grid of a day:
    // per value a window of about three samples on each side, and lookups of one row where it has none.
    const times = Array.from({ length: 200 }, (_, i) => iso(start + i * 4 * 3_600_000 + 17_000));
    const interpPlans: Explained[] = [];
    const values = await openInterpolated(explaining(db, interpPlans), everything, {
      sensorIds: [SENSOR, SENSOR_2],
      times,
    });
    expect(await drain(values)).toBe(400);
    const grid = await openInterpolated(explaining(db, interpPlans), everything, {
      sensorIds: [SENSOR_2],
      start: iso(month + 30 * 86_400_000),
      end: iso(month + 31 * 86_400_000),
      interval: '1m',
    });
    expect(await drain(grid)).toBe(1441);
    expect(overspent(interpPlans, 7 * 1441)).toEqual([]);
    // The partitions were named: every lookup of a value went to one, none through sensor_logs' pruning.
    expect(interpPlans.some((p) => /sensor_logs_p\d{4}_\d{2}/.test(p.sql))).toBe(true);
  }, 180_000);

  it('transaction and change-log pages, and the stream follower, read by their keys', async () => {
    const plans: Explained[] = [];
    const spy = explaining(db, plans);
    await db.query(
      `INSERT INTO transactions (transaction_id, ticket_number, site_id, transaction_date)
         SELECT 900000 + i, i, 1, to_timestamp($1::float8 / 1000) + i * interval '1 minute' FROM generate_series(1, 20000) i`,
      [month],
    );
    const range = { start: month, end: month + 30 * 86_400_000 };
    let n = 0;
    for await (const page of transactionPages(
      spy,
      { siteIds: [1], ...range, motionCap: false },
      1000,
    )) {
      n += page.length;
      if (n >= 3000) break;
    }
    expect(n).toBe(3000);
    for await (const page of changeLogPages(
      spy,
      { siteIds: [1], ticketNumbers: null, ...range },
      1000,
    ))
      void page;
    const page = await readEvents(spy, { xmax: 1, xip: [], partials: [] }, 500, [1]);
    expect(page.rows).toHaveLength(500);
    expect(overspent(plans, 1002)).toEqual([]);
  }, 120_000);

  it("alarm lists, journal, performance and actions read one site's alarms by key, not another's", async () => {
    const plans: Explained[] = [];
    const spy = explaining(db, plans);
    const day = 86_400_000;
    // A busy site 2: 100,000 resolved alarms and their journal over the year before; site 1: 200 in the range.
    await db.query(
      `WITH a AS (
         INSERT INTO site_alarms (site_id, alarm_type, severity, message, first_seen, last_seen, raised_at, resolved_at)
         SELECT $1::int, 'Busy' || i, 'major', 'm', t, t, t, t + interval '1 minute'
           FROM generate_series(1, $2::int) i, LATERAL (SELECT to_timestamp($3::float8 / 1000) - i * interval '5 minutes' AS t) x
         RETURNING alarm_id, site_id, raised_at)
       INSERT INTO alarm_journal (alarm_id, site_id, time, event) SELECT alarm_id, site_id, raised_at, 'raised' FROM a`,
      [2, 100_000, month + 30 * day],
    );
    await db.query(
      `WITH a AS (
         INSERT INTO site_alarms (site_id, alarm_type, severity, message, first_seen, last_seen, raised_at)
         SELECT 1, 'Mine' || i, 'major', 'm', t, t, t
           FROM generate_series(1, 200) i, LATERAL (SELECT to_timestamp($1::float8 / 1000) + i * interval '1 minute' AS t) x
         RETURNING alarm_id, site_id, raised_at)
       INSERT INTO alarm_journal (alarm_id, site_id, time, event) SELECT alarm_id, site_id, raised_at, 'raised' FROM a`,
      [month + 29 * day],
    );
    const range = {
      start: new Date(month).toISOString(),
      end: new Date(month + 31 * day).toISOString(),
    };
    const list = await listAlarms(spy, everything, {
      siteIds: [1],
      ...range,
      page: 2,
      perPage: 50,
    });
    expect(list.total).toBe(200);
    const unacked = await listAlarms(spy, everything, {
      siteIds: [1],
      ...range,
      state: 'unacknowledged',
      page: 1,
      perPage: 50,
    });
    expect(unacked.data).toHaveLength(50);
    const journal = await listJournal(spy, everything, {
      siteIds: [1],
      ...range,
      page: 1,
      perPage: 50,
    });
    expect(journal.total).toBe(200);
    const [kpis] = await alarmKpis(spy, everything, { siteIds: [1], ...range, series: '1d' });
    expect(kpis.Raised).toBe(200);
    expect(await listActive(spy, [1], 100)).toHaveLength(100);
    const ids = list.data.slice(0, 10).map((a) => a.SiteAlarmLogID);
    const acked = await acknowledgeAlarms(spy, everything, {
      siteId: 1,
      items: ids.map((SiteAlarmLogID) => ({ SiteAlarmLogID })),
      pathOf: (i) => `/alarms/${i}`,
    });
    expect(acked.map((r) => r.status)).toEqual(ids.map(() => 'acknowledged'));
    expect(await expireShelves(spy)).toEqual([]);
    // Each statement handles at most site 1's 200 alarms (and their 200 entries), never site 2's.
    expect(overspent(plans, 1000)).toEqual([]);
  }, 120_000);

  it('the rule evaluator reads the logs an event names by key, and its rules by equipment', async () => {
    const log = { warn: () => {}, info: () => {} } as unknown as Parameters<
      typeof evaluatePass
    >[1]['log'];
    await importDocument(db, {
      alarmRules: [
        {
          AlarmRuleID: 1,
          SiteSensorID: SENSOR,
          Condition: 'above',
          Limit: 500,
          AlarmType: 'PLAN_HIGH',
        },
      ],
    });
    await evaluatePass(db, { log }); // takes its position: what is committed now
    // An upload's event over 1,000 of the million seconds (values i % 977: above 500 and back twice).
    const from = month + 500_000_000;
    await db.query(
      `INSERT INTO stream_events (site_id, type, data) VALUES (1, 'logs', json_build_object('siteId', 1,
         'kind', 'sensor', 'ids', json_build_array($1::int), 'from', $2::text, 'to', $3::text, 'count', 1000)::text)`,
      [SENSOR, new Date(from).toISOString(), new Date(from + 999_000).toISOString()],
    );
    const plans: Explained[] = [];
    expect(await evaluatePass(explaining(db, plans), { log })).toMatchObject({ changed: true });
    expect(overspent(plans, 1002)).toEqual([]);
    expect(logRowsOf(plans)).toBeLessThanOrEqual(1000 * 2); // once explained, once run
    const [{ n }] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM site_alarms WHERE alarm_type = 'PLAN_HIGH'`,
    );
    expect(n).toBeGreaterThan(0);
  }, 120_000);

  it('notifications: due steps, due deliveries and a resolve are found by key among 100,000 waiting', async () => {
    await db.query(
      `INSERT INTO notification_channels (channel_id, type, url) VALUES ('plan-hook', 'webhook', 'http://127.0.0.1:9/')`,
    );
    await db.query(
      `INSERT INTO notification_policies (policy_id, site_ids, min_severity, steps)
       VALUES ('plan', '{3}', 'info', '[{"after": 0, "channels": ["plan-hook"]}]')`,
    );
    // 100,000 alarms whose steps and deliveries wait for later; 5 due now.
    await db.query(
      `WITH a AS (
         INSERT INTO site_alarms (site_id, alarm_type, severity, message, first_seen, last_seen)
         SELECT 2, 'Wait' || i, 'major', 'm', now(), now() FROM generate_series(1, 100000) i RETURNING alarm_id, site_id),
       s AS (INSERT INTO notification_schedule (alarm_id, policy_id, next_step, due_at)
             SELECT alarm_id, 'plan', 0, now() + interval '1 day' FROM a)
       INSERT INTO notification_outbox (alarm_id, site_id, channel_id, event, step, next_attempt_at)
       SELECT alarm_id, site_id, 'plan-hook', 'raised', 0, now() + interval '1 day' FROM a`,
    );
    const due = await db.query<{ id: string }>(
      `WITH a AS (
         INSERT INTO site_alarms (site_id, alarm_type, severity, message, first_seen, last_seen)
         SELECT 3, 'Due' || i, 'major', 'm', now(), now() FROM generate_series(1, 5) i RETURNING alarm_id)
       INSERT INTO notification_schedule (alarm_id, policy_id, next_step, due_at)
       SELECT alarm_id, 'plan', 0, now() - interval '1 second' FROM a RETURNING alarm_id::text AS id`,
    );
    const plans: Explained[] = [];
    const spy = explaining(db, plans);
    expect(await runDueSteps(spy)).toBe(5);
    const claimed = await claimDue(spy);
    expect(claimed.map((c) => c.alarm_id).sort()).toEqual(due.map((d) => d.id).sort());
    for (const c of claimed) await settle(spy, c, { result: 'delivered' });
    const resolved = await markResolved(
      spy,
      3,
      due.map((d) => ({ id: d.id, note: null })),
      'plans',
    );
    expect(resolved).toHaveLength(5);
    expect(overspent(plans, 1000)).toEqual([]);
  }, 120_000);

  it('the refresher touches only the logs of the quarters it was asked to refresh', async () => {
    const plans: Explained[] = [];
    let taken = 0;
    for (let n = -1; n !== 0; taken += n)
      n = await refreshMarked(explaining(db, plans), UNITS.sensor, 1000);
    expect(taken).toBe(8);
    // An hour of both sensors: 3,600 + 60 log rows; their hour and day above them.
    expect(overspent(plans, 3_700)).toEqual([]);
  }, 120_000);

  it("the writer's statements, as planned once per connection, reach current values and sites by key", async () => {
    // Many sites and current values, never analyzed; the statements write two sensors of site 1.
    await db.query(
      `INSERT INTO sites (site_id, name, company_id)
         SELECT 1000000 + i, 'plans ' || i, (SELECT company_id FROM sites WHERE site_id = 1) FROM generate_series(1, 20000) i`,
    );
    await db.query(
      `INSERT INTO current_readings (equipment_kind, equipment_id, site_id, ts, record)
         SELECT 'sensor', 2000000 + i, 1, now(), '{}' FROM generate_series(1, 50000) i`,
    );
    const at = (m: number) => month + 40 * 86_400_000 + m * 60_000;
    const entry = (id: number, m: number): Entry => ({
      kind: 'sensor',
      id,
      ts: at(m),
      values: [m],
      record: { siteSensorID: id, value: m },
      index: 0,
      site: 1,
    });
    const reading = (...e: Entry[]) => makeJob('reading', e, [1]);
    const log = (...e: Entry[]) => makeJob('log', e, [1]);
    const statements: [string, ReturnType<typeof buildStatement>][] = [
      [
        'readings, each equipment once',
        buildStatement([reading(entry(SENSOR, 1), entry(SENSOR_2, 1))], [1], 'insert'),
      ],
      [
        'readings of one equipment in order',
        buildStatement(
          [reading(entry(SENSOR, 2)), reading(entry(SENSOR, 3), entry(SENSOR_2, 2))],
          [1],
          'insert',
        ),
      ],
      [
        'logs, plain insert',
        buildStatement([log(entry(SENSOR, 1), entry(SENSOR, 2))], [1], 'insert'),
      ],
      ['logs, upsert', buildStatement([log(entry(SENSOR, 1), entry(SENSOR_2, 2))], [1], 'upsert')],
    ];
    const plans: Explained[] = [];
    const rolledBack = new Error('rolled back');
    for (const [name, { sql, params }] of statements)
      await db
        .transaction(async (tx) => {
          // As a named prepared statement is run once it has been run a few times: its generic plan.
          await tx.query(`PREPARE plan_check AS ${sql}`);
          try {
            await tx.query('SET LOCAL plan_cache_mode = force_generic_plan');
            const [row] = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
              `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE plan_check(${params.map(literal).join(', ')})`,
            );
            plans.push({ sql: `${name}: ${sql}`, plan: row['QUERY PLAN'][0].Plan });
          } finally {
            await tx.query('DEALLOCATE plan_check');
          }
          throw rolledBack;
        })
        .catch((err: unknown) => {
          if (err !== rolledBack) throw err;
        });
    expect(plans).toHaveLength(4);
    const byKey = plans.flatMap((p) =>
      nodes(p.plan)
        .filter(
          (n) => /^(sites|current_readings)$/.test(n['Relation Name'] ?? '') && handled(n) > 4,
        )
        .map(
          (n) =>
            `${n['Node Type']} ${n['Relation Name']} ${handled(n)} rows in: ${p.sql.slice(0, 60)}`,
        ),
    );
    expect(byKey).toEqual([]);
    expect(overspent(plans, 100)).toEqual([]);
  }, 120_000);

  it('archived days: a raw download and an upload of old logs find them by key, as planned once per connection', async () => {
    const DAY = 86_400_000;
    const iso = (t: number) => new Date(t).toISOString();
    // Ten days of minutes of a third sensor, archived (as the pass moves them).
    const sensor = SENSOR_2 + 1;
    const first = month + 5 * DAY;
    await db.query(
      `INSERT INTO sensor_logs (sensor_id, ts, value)
         SELECT $1, to_timestamp($2::float8 / 1000) + i * interval '1 minute', i % 59 FROM generate_series(0, 60 * 24 * 10 - 1) i`,
      [sensor, first],
    );
    for (let d = 0; d < 10; d++)
      expect(
        await db.query(moveDaySql('sensor'), [
          [sensor],
          iso(first + d * DAY),
          iso(first + (d + 1) * DAY),
        ]),
      ).toEqual([{ id: sensor, n: 1440 }]);
    // And a year of days of 100 other sensors (copies of these), so that the table is not one a plan
    // would read whole.
    await db.query(
      `INSERT INTO sensor_log_days SELECT a.sensor_id + 1000 * g.n + 10 * x.k, a.day + x.k * interval '10 days', a.n,
              a.first_ts + x.k * interval '10 days', a.last_ts + x.k * interval '10 days', a.t0, a.step, a.tms, a.value, a.value_m, a.value_k
         FROM sensor_log_days a, generate_series(1, 100) g(n), generate_series(1, 36) x(k) WHERE a.sensor_id = $1`,
      [sensor],
    );
    const plans: Explained[] = [];
    const download = await openRawSensorLogs(
      explaining(db, plans),
      everything,
      { sensorId: sensor, start: iso(first + 3_600_000), end: iso(first + 10 * DAY) },
      'csv',
    );
    let logs = 0;
    for await (const page of { [Symbol.asyncIterator]: () => download.pages })
      logs += (page as { text: string }).text.split('\r\n').length;
    expect(logs).toBe(14_400 - 60);
    // The days' pages (spans of three days), each a generic plan.
    const pages = plans.filter(
      (p) => p.sql.includes('sensor_log_days') && p.sql.includes('string_agg'),
    );
    expect(pages).toHaveLength(4);
    // An upload's lookup of its days (five archived, five not), likewise.
    const [found] = await explaining(db, plans).query<{ archived: boolean }>(
      anyArchivedSql('sensor'),
      [
        Array.from({ length: 10 }, () => sensor),
        Array.from({ length: 10 }, (_, d) => iso(first + (d + 5) * DAY)),
      ],
      { prepared: true },
    );
    expect(found.archived).toBe(true);
    const byKey = plans.flatMap((p) =>
      nodes(p.plan)
        .filter(
          (n) => /^sensor_(log|rollup)_days$/.test(n['Relation Name'] ?? '') && handled(n) > 10,
        )
        .map(
          (n) =>
            `${n['Node Type']} ${n['Relation Name']} ${handled(n)} rows in: ${p.sql.slice(0, 60)}`,
        ),
    );
    expect(byKey).toEqual([]);
    expect(overspent(plans, 5_001)).toEqual([]);
  }, 120_000);

  it('a million rows cost the same work before and after ANALYZE', async () => {
    const work = async () => {
      const plans: Explained[] = [];
      const download = await openRawSensorLogs(
        explaining(db, plans),
        everything,
        {
          sensorId: SENSOR,
          start: new Date(month).toISOString(),
          end: new Date(month + SECONDS * 1000).toISOString(),
        },
        'json',
      );
      for await (const page of { [Symbol.asyncIterator]: () => download.pages }) void page;
      return logRowsOf(plans.filter((p) => p.sql.includes('sensor_logs')));
    };
    const before = await work();
    // Each row once (and the one past each page's end at most).
    expect(before).toBeGreaterThanOrEqual(SECONDS);
    expect(before).toBeLessThanOrEqual(SECONDS * 1.01);
    // The last test of the suite: the others must see a database that was never analyzed.
    await db.query(`ANALYZE sensor_logs`);
    expect(await work()).toBe(before);
  }, 180_000);
});
