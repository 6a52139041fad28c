import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import { runRetention, type RetentionOptions } from '../../src/telemetry/retention/pass.js';
import { describeRetention } from '../../src/telemetry/retention/report.js';
import { rebuildAll, refreshAll } from '../../src/telemetry/rollups/refresh.js';
import {
  bearer,
  describeEachBackend,
  startApp,
  testSettings,
  type TestContext,
} from '../helper.js';
import { count } from './fixtures.js';
import { downloader, LOAD_URL, loadBody, RAW_URL, type Kind } from './download-fixtures.js';
import {
  addMonths,
  DAY,
  equipmentOf,
  exists,
  iso,
  rollupCounts,
  rows,
  writeLogs,
  type Equipment,
} from './retention-fixtures.js';

// Retention (contract 15). Logs in five months: three in the archive partition (older than the first
// monthly partition, as a backfill would be) and the first two monthly partitions. A first pass drops
// the two oldest archive months (the archive keeps the third), a later one the rest of the archive,
// whole, and the first monthly partition. Summaries of whole quarter-hours over the removed months,
// meter volume across their edges included, are the same before and after; raw logs there are gone.

const DAYS = 10;
const HOUR = 3_600_000;
const LOG_TABLES = ['sensor_logs', 'meter_logs', 'pump_logs', 'tank_logs'];

describeEachBackend('telemetry retention', (backend) => {
  let ctx: TestContext;
  let token: string;
  let eq: Equipment;
  let get: ReturnType<typeof downloader>;
  /** The first monthly partition, the three archive months before it, and the end of the data. */
  let F: number, A1: number, A2: number, A3: number, END: number;
  /** Clocks at which the target horizon is A3, then END. */
  let now1: number, now3: number;
  let cases: {
    name: string;
    kind: Kind;
    ids: number[];
    start: number;
    end: number;
    more?: object;
  }[];
  const before = new Map<string, unknown>();
  let rollupsBefore: Record<string, number>;
  let archiveA3: Record<string, number>;

  const pass = (db: Database, now: number, more: Partial<RetentionOptions> = {}) =>
    runRetention(db, { days: DAYS, now, ...more });
  const summaries = async (kind: Kind, ids: number[], start: number, end: number, more = {}) => {
    const a = await get(LOAD_URL[kind], loadBody(kind, ids, iso(start), iso(end), more));
    expect(a.status, a.text).toBe(200);
    return a.body as Record<string, unknown>[];
  };
  const raw = async (start: number, end: number) => {
    const a = await get(RAW_URL, { sensorId: eq.sensor, start: iso(start), end: iso(end) });
    expect(a.status, a.text).toBe(200);
    return a.body as unknown[];
  };
  const expectSameSummaries = async () => {
    for (const c of cases)
      expect(await summaries(c.kind, c.ids, c.start, c.end, c.more), c.name).toEqual(
        before.get(c.name),
      );
  };

  beforeAll(async () => {
    ctx = await startApp(backend, {
      settings: { ROLLUP_REFRESH_MS: 0 },
      demo: { sites: 2, transactionsPerSite: 0, imagesPerSite: 0 },
    });
    token = await ctx.token();
    get = downloader(ctx, token);
    eq = await equipmentOf(ctx.db);
    const [first] = await ctx.db.query<{ ms: number }>(
      `SELECT date_part('epoch', min(month)) * 1000 AS ms FROM telemetry_months`,
    );
    F = Number(first.ms);
    [A1, A2, A3, END] = [addMonths(F, -3), addMonths(F, -2), addMonths(F, -1), addMonths(F, 1)];
    now1 = A3 + DAYS * DAY + HOUR;
    now3 = END + DAYS * DAY + HOUR;
    await writeLogs(ctx.db, eq, A1, END, {
      gapFrom: A3 - 5 * DAY,
      gapTo: A3 + 3 * DAY,
      reset: A2 + 12 * DAY,
    });
    await rebuildAll(ctx.db);

    const all = (kind: Kind) => (kind === 'meter' ? [eq.meter, eq.meter2] : [eq[kind]]);
    cases = (['sensor', 'meter', 'pump', 'tank'] as Kind[]).flatMap((kind) => [
      { name: `${kind} days`, kind, ids: all(kind), start: A1, end: END, more: { interval: '1d' } },
      {
        name: `${kind} New York hours across the first edge`,
        kind,
        ids: all(kind),
        start: A2 + 10 * DAY,
        end: A3 + 10 * DAY,
        more: { interval: '1h', timeZone: 'America/New_York' },
      },
      {
        name: `${kind} quarters around the first edge`,
        kind,
        ids: all(kind),
        start: A3 - DAY,
        end: A3 + DAY,
        more: { interval: '15m' },
      },
      {
        name: `${kind} hours from the first edge`,
        kind,
        ids: all(kind),
        start: A3,
        end: A3 + 2 * DAY,
      },
      {
        name: `${kind} all of a range cut on quarters`,
        kind,
        ids: all(kind),
        start: A1 + 3 * DAY + 45 * 60_000,
        end: END - 2 * HOUR,
        more: { interval: 'all' },
      },
      {
        name: `${kind} Kolkata days across both edges`,
        kind,
        ids: all(kind),
        start: A2 + 15 * DAY,
        end: F + 10 * DAY,
        more: { interval: '1d', timeZone: 'Asia/Kolkata' },
      },
    ]);
    // meter2's first readings after its gap link to its last one before it, in a removed month.
    cases.push(
      {
        name: 'meter2 hours after its gap',
        kind: 'meter',
        ids: [eq.meter2],
        start: A3 + 3 * DAY,
        end: A3 + 4 * DAY,
      },
      {
        name: 'meter2 all of the month after its gap',
        kind: 'meter',
        ids: [eq.meter2],
        start: A3 + 3 * DAY,
        end: F,
        more: { interval: 'all' },
      },
      {
        name: 'meter hours from the start of the first monthly partition',
        kind: 'meter',
        ids: [eq.meter, eq.meter2],
        start: F,
        end: F + 6 * HOUR,
      },
      // Whole quarters of a bucket cut inside a removed quarter (compared below).
      ...(['sensor', 'meter'] as Kind[]).map((kind) => ({
        name: `${kind} cut at a quarter`,
        kind,
        ids: all(kind),
        start: A2 + 10 * DAY + 15 * 60_000,
        end: A2 + 10 * DAY + 3 * HOUR,
      })),
    );
    for (const c of cases)
      before.set(c.name, await summaries(c.kind, c.ids, c.start, c.end, c.more));
    // The data the cases rest on is there.
    expect(
      (before.get('meter2 hours after its gap') as { volume: number }[])[0].volume,
    ).toBeGreaterThan(0);
    expect(before.get('sensor days')).toHaveLength((END - A1) / DAY);
    rollupsBefore = await rollupCounts(ctx.db);
    archiveA3 = {};
    for (const t of LOG_TABLES) archiveA3[t] = await rows(ctx.db, `${t}_archive`, A3, F);
  });
  afterAll(async () => ctx?.close());

  it('keeps a month with a stale rollup quarter until a later pass has refreshed it', async () => {
    expect(await raw(A2 + DAY, A2 + 2 * DAY)).not.toHaveLength(0);
    const mark = A2 + 5 * DAY;
    let marked = false;
    // An upload into A2 lands after the pass refreshed the archive's marks and before it removes logs.
    const first = await pass(ctx.db, now1, {
      progress: async (m) => {
        if (marked || !m.startsWith('archive: removing')) return;
        marked = true;
        await ctx.db.query(
          `INSERT INTO rollup_dirty (kind, equipment_id, bucket) VALUES (1, $1, $2)`,
          [eq.sensor, iso(mark)],
        );
      },
    });
    expect(marked).toBe(true);
    expect(first).toMatchObject({ ran: true, before: undefined, after: A2, target: A3 });
    expect(first.skipped?.what).toBe(iso(A2).slice(0, 7));
    expect(describeRetention(first).at(-1)).toMatch(
      /^left for a later pass: \d{4}-\d{2} and every later month: 1 stale rollup quarter/,
    );
    for (const t of LOG_TABLES) {
      expect(await rows(ctx.db, `${t}_archive`, -Infinity, A2), t).toBe(0);
      expect(await rows(ctx.db, `${t}_archive`, A2, A3), t).toBeGreaterThan(0);
      expect(first.archive[`${t}_archive`].rows, t).toBeGreaterThan(0);
    }
    expect(await count(ctx.db, 'rollup_dirty')).toBe(1);

    const second = await pass(ctx.db, now1);
    expect(second).toMatchObject({ ran: true, before: A2, after: A3, refreshed: 1, dropped: {} });
    expect(second.skipped).toBeUndefined();
    for (const t of LOG_TABLES) {
      expect(await rows(ctx.db, `${t}_archive`, -Infinity, A3), t).toBe(0);
      expect(await rows(ctx.db, `${t}_archive`, A3, F), t).toBe(archiveA3[t]);
      expect(await exists(ctx.db, `${t}_archive`), t).toBe(true);
    }
    expect(await count(ctx.db, 'rollup_dirty')).toBe(0);
  });

  it('answers summaries of the removed months from the rollups, as before; raw logs there are gone', async () => {
    expect(await rollupCounts(ctx.db)).toEqual(rollupsBefore);
    await expectSameSummaries();
    expect(await raw(A2 + DAY, A2 + 2 * DAY)).toEqual([]);
    expect(await raw(A3 + DAY, A3 + 2 * DAY)).not.toHaveLength(0);
  });

  it('counts only the whole quarters of a bucket cut inside a removed month', async () => {
    for (const kind of ['sensor', 'meter'] as Kind[]) {
      const ids = kind === 'meter' ? [eq.meter, eq.meter2] : [eq.sensor];
      const wholeQuarters = before.get(`${kind} cut at a quarter`) as Record<string, unknown>[];
      const cutStart = A2 + 10 * DAY + 7 * 60_000;
      const cut = await summaries(kind, ids, cutStart, A2 + 10 * DAY + 3 * HOUR);
      // The same buckets and numbers; the first ones start at the cut.
      expect(cut).toEqual(
        wholeQuarters.map((s) =>
          s.start === iso(A2 + 10 * DAY + 15 * 60_000) ? { ...s, start: iso(cutStart) } : s,
        ),
      );
    }
  });

  it('drops nothing on a second pass at the same time', async () => {
    const again = await pass(ctx.db, now1);
    expect(again).toMatchObject({
      ran: true,
      before: A3,
      after: A3,
      refreshed: 0,
      dropped: {},
      archive: {},
    });
    expect(describeRetention(again)).toContain('nothing was dropped');
    for (const t of LOG_TABLES) expect(await rows(ctx.db, `${t}_archive`), t).toBe(archiveA3[t]);
  });

  it('never rebuilds a quarter before the horizon from a log that slipped in, and removes that log', async () => {
    const quarter = A2 + 5 * DAY;
    const rollup = () =>
      ctx.db.query(
        `SELECT level, bucket, count, v_sum FROM sensor_rollups WHERE sensor_id = $1 AND bucket >= $2 AND bucket < $3 ORDER BY 1, 2`,
        [eq.sensor, iso(quarter - DAY), iso(quarter + DAY)],
      );
    const kept = await rollup();
    expect(kept.length).toBeGreaterThan(96);
    // As an upload checked against a horizon read before a pass moved it would store it.
    await ctx.db.query(`INSERT INTO sensor_logs (sensor_id, ts, value) VALUES ($1, $2, 12345)`, [
      eq.sensor,
      iso(quarter + 61_000),
    ]);
    await ctx.db.query(`INSERT INTO rollup_dirty (kind, equipment_id, bucket) VALUES (1, $1, $2)`, [
      eq.sensor,
      iso(quarter),
    ]);
    await refreshAll(ctx.db);
    expect(await count(ctx.db, 'rollup_dirty')).toBe(0);
    expect(await rollup()).toEqual(kept);
    const swept = await pass(ctx.db, now1);
    expect(swept).toMatchObject({ before: A3, after: A3, dropped: {} });
    expect(swept.archive).toEqual({ sensor_logs_archive: { rows: 1, dropped: false } });
    expect(await rows(ctx.db, 'sensor_logs_archive', -Infinity, A3)).toBe(0);
  });

  it('runs one pass at a time (two connections), then drops the archive whole, and the first monthly partition once its rollups are complete', async () => {
    let other: Database = ctx.db;
    if (backend === 'postgres') {
      const [{ schema }] = await ctx.db.query<{ schema: string }>(
        `SELECT current_schema() AS schema`,
      );
      other = await openPostgres(process.env.TEST_DATABASE_URL!, { schema, max: 2 });
    }
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const month = iso(F).slice(0, 7);
    let marked = false;
    const first = pass(ctx.db, now3, {
      progress: async (m) => {
        entered();
        await gate;
        // And an upload into the first monthly partition comes in as its turn comes.
        if (m === `${month}: dropping its partitions` && !marked) {
          marked = true;
          await ctx.db.query(
            `INSERT INTO rollup_dirty (kind, equipment_id, bucket) VALUES (3, $1, $2)`,
            [eq.pump, iso(F + 2 * DAY)],
          );
        }
      },
    });
    try {
      await inside;
      const meanwhile = await pass(other, now3);
      expect(meanwhile.ran).toBe(false);
      expect(describeRetention(meanwhile)).toEqual([
        'another retention pass is under way (another instance?): nothing was done',
      ]);
    } finally {
      release();
      if (other !== ctx.db) await other.close();
    }
    const archived = await first;
    expect(marked).toBe(true);
    expect(archived).toMatchObject({ ran: true, before: A3, after: F, dropped: {} });
    expect(archived.skipped?.what).toBe(month);
    for (const t of LOG_TABLES) {
      expect(archived.archive[`${t}_archive`], t).toEqual({ rows: archiveA3[t], dropped: true });
      expect(await exists(ctx.db, `${t}_archive`), t).toBe(false);
      expect(await exists(ctx.db, `${t}_p${month.replace('-', '_')}`), t).toBe(true);
    }

    const done = await pass(ctx.db, now3);
    expect(done).toMatchObject({ ran: true, before: F, after: END, refreshed: 1, archive: {} });
    expect(done.skipped).toBeUndefined();
    for (const t of LOG_TABLES) {
      expect(done.dropped[t], t).toEqual([month]);
      expect(await exists(ctx.db, `${t}_p${month.replace('-', '_')}`), t).toBe(false);
      expect(await exists(ctx.db, `${t}_p${iso(END).slice(0, 7).replace('-', '_')}`), t).toBe(true);
      expect(await rows(ctx.db, t, -Infinity, END), t).toBe(0);
    }
    const months = await ctx.db.query<{ ms: number }>(
      `SELECT date_part('epoch', min(month)) * 1000 AS ms FROM telemetry_months`,
    );
    expect(Number(months[0].ms)).toBe(END);
    expect(describeRetention(done)).toContain(`sensor_logs: months dropped: ${month}`);
    expect(describeRetention(archived)).toContain(
      `sensor_logs_archive: ${archiveA3.sensor_logs} rows removed (dropped whole)`,
    );

    expect(await rollupCounts(ctx.db)).toEqual(rollupsBefore);
    await expectSameSummaries();
    expect(await raw(F + DAY, F + 2 * DAY)).toEqual([]);
    expect((await pass(ctx.db, now3)).after).toBe(END);
  });

  it('refuses uploads of logs older than the horizon (400), and stores newer ones', async () => {
    // An instance started after the pass knows the horizon.
    const app = await buildApp(testSettings(), { db: ctx.db, logger: false });
    try {
      await app.ready();
      const post = (records: unknown[]) =>
        app.inject({
          method: 'POST',
          url: '/v1/edge/logs/sensor/batch',
          headers: { ...bearer(token), 'content-type': 'application/json' },
          payload: records,
        });
      const recent = iso(Math.max(END + 60_000, Date.now() - 60_000));
      const refused = await post([
        { sensorID: eq.sensor, value: 1, timestamp: recent },
        { sensorID: eq.sensor, value: 2, timestamp: iso(A3 + DAY) },
      ]);
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.json().details).toEqual([
        {
          path: '/1/timestamp',
          message: `/1/timestamp is before ${iso(END)}: the logs of older months have been removed (retention)`,
        },
      ]);
      const stored = await post([{ sensorID: eq.sensor, value: 1, timestamp: recent }]);
      expect(stored.statusCode, stored.body).toBe(201);
    } finally {
      await app.close();
    }
  });
});
