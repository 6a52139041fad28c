import { afterAll, beforeAll, expect, it } from 'vitest';
import { markAll, refreshAll } from '../../src/telemetry/rollups/refresh.js';
import { UNITS } from '../../src/telemetry/rollups/units.js';
import { RollupRefresher } from '../../src/telemetry/rollups/refresher.js';
import { describeEachBackend, instrument, startApp, type TestContext } from '../helper.js';
import { until } from '../wait.js';
import { count, METER, poster, PUMP, SENSOR } from './fixtures.js';
import {
  iso,
  sensorLogs,
  sensorSummary as S,
  summaryLoader,
  type Kind,
} from './download-fixtures.js';

// Summaries are exact (contract 6): after a refresh has rolled buckets up, late, replayed and
// replacing uploads into those buckets show in the next summary, before the refresher ran again
// (some buckets clean, some stale) and after it. Closed quarters are rolled up by the upload itself,
// so these uploads leave nothing stale; stale buckets are read from the logs (download-buckets.test.ts).

type Row = Record<string, unknown>;
const DAY1 = '2026-09-01T00:00:00Z';
const DAY3 = '2026-09-03T00:00:00Z';
const d1 = (hm: string) => `2026-09-01T${hm}:00Z`;
const d2 = (hm: string) => `2026-09-02T${hm}:00Z`;

describeEachBackend('telemetry download after late uploads', (backend) => {
  let ctx: TestContext;
  let post: ReturnType<typeof poster>;
  let load: ReturnType<typeof summaryLoader>;
  beforeAll(async () => {
    ctx = await startApp(backend, { settings: { ROLLUP_REFRESH_MS: 0 } });
    const token = await ctx.token('*');
    post = poster(ctx, token);
    load = summaryLoader(ctx, token);
  });
  afterAll(async () => ctx?.close());

  const marks = () => count(ctx.db, 'rollup_dirty');
  /** Uploads, checks the answer's counts, and returns how many buckets are stale now. */
  const upload = async (kind: Kind, records: Row[], stored: number, duplicates = 0) => {
    expect(await post(`logs/${kind}/batch`, records)).toEqual({
      status: 201,
      body: { received: records.length, stored, duplicates },
    });
    return marks();
  };
  /** The expectation holds with the marks of the uploads (mixed state), and again once refreshed. */
  const expectBoth = async (check: (state: string) => Promise<void>) => {
    await check('mixed');
    await refreshAll(ctx.db);
    expect(await marks()).toBe(0);
    await check('clean');
  };

  it('sensor: late, replayed and replacing logs in rolled-up hours and days', async () => {
    await upload(
      'sensor',
      sensorLogs(SENSOR, [
        [d1('10:00'), 10],
        [d1('10:30'), 20],
        [d1('11:00'), 30],
        [d2('10:00'), 40],
      ]),
      4,
    );
    await refreshAll(ctx.db);
    const hours = () => load('sensor', [SENSOR], DAY1, DAY3);
    const days = () => load('sensor', [SENSOR], DAY1, DAY3, { interval: '1d' });
    expect(await days()).toEqual([
      S(SENSOR, DAY1, d2('00:00'), [10, 20, 30]),
      S(SENSOR, d2('00:00'), DAY3, [40]),
    ]);

    // Late: a new minimum and maximum inside a rolled-up hour, a new first and last of a rolled-up day.
    const late = sensorLogs(SENSOR, [
      [d1('10:15'), 5],
      [d1('10:45'), 50],
      [d1('00:00'), 100],
      [d1('23:59'), 1],
    ]);
    // Closed quarters are rolled up by the upload itself: nothing is left stale.
    expect(await upload('sensor', late, 4)).toBe(0);
    await expectBoth(async (state) => {
      expect
        .soft(await hours(), state)
        .toEqual([
          S(SENSOR, d1('00:00'), d1('01:00'), [100]),
          S(SENSOR, d1('10:00'), d1('11:00'), [10, 5, 20, 50]),
          S(SENSOR, d1('11:00'), d1('12:00'), [30]),
          S(SENSOR, d1('23:00'), d2('00:00'), [1]),
          S(SENSOR, d2('10:00'), d2('11:00'), [40]),
        ]);
      expect
        .soft(await days(), state)
        .toEqual([
          S(SENSOR, DAY1, d2('00:00'), [100, 10, 5, 20, 50, 30, 1]),
          S(SENSOR, d2('00:00'), DAY3, [40]),
        ]);
    });

    // Replayed: counted as duplicates, nothing marked, nothing changes.
    const before = [await hours(), await days()];
    expect(await upload('sensor', late, 0, 4)).toBe(0);
    expect([await hours(), await days()]).toEqual(before);

    // Replacing: new values for stored keys.
    expect(
      await upload(
        'sensor',
        sensorLogs(SENSOR, [
          [d1('11:00'), 35],
          [d2('10:00'), -40],
        ]),
        2,
      ),
    ).toBe(0);
    await expectBoth(async (state) => {
      expect
        .soft((await hours()).slice(2), state)
        .toEqual([
          S(SENSOR, d1('11:00'), d1('12:00'), [35]),
          S(SENSOR, d1('23:00'), d2('00:00'), [1]),
          S(SENSOR, d2('10:00'), d2('11:00'), [-40]),
        ]);
      expect
        .soft(await days(), state)
        .toEqual([
          S(SENSOR, DAY1, d2('00:00'), [100, 10, 5, 20, 50, 35, 1]),
          S(SENSOR, d2('00:00'), DAY3, [-40]),
        ]);
    });
  });

  it('meter: a late or replacing reading changes the volume of the rolled-up bucket after it', async () => {
    const m = (time: string, totalVolume: number) => ({
      flowMeterID: METER,
      timestamp: time,
      totalVolume,
    });
    await upload('meter', [m(d1('10:00'), 100), m(d1('11:00'), 150), m(d1('12:00'), 170)], 3);
    await refreshAll(ctx.db);
    const vol = async (interval: string) =>
      (await load('meter', [METER], DAY1, DAY3, { interval })).map((e) => [
        e.start,
        e.count,
        e.volume,
        e.lastTotalVolume,
      ]);
    expect(await vol('1h')).toEqual([
      [iso(d1('10:00')), 1, 0, 100],
      [iso(d1('11:00')), 1, 50, 150],
      [iso(d1('12:00')), 1, 20, 170],
    ]);

    expect(await upload('meter', [m(d1('10:40'), 130)], 1)).toBe(0);
    await expectBoth(async (state) => {
      expect.soft(await vol('1h'), state).toEqual([
        [iso(d1('10:00')), 2, 30, 130],
        [iso(d1('11:00')), 1, 20, 150],
        [iso(d1('12:00')), 1, 20, 170],
      ]);
      expect.soft(await vol('1d'), state).toEqual([[iso(DAY1), 4, 70, 170]]);
    });

    // 11:00 drops below 10:40: a counter reset, adding its own total; 12:00 then adds 50.
    expect(await upload('meter', [m(d1('11:00'), 120)], 1)).toBe(0);
    await expectBoth(async (state) => {
      expect.soft(await vol('1h'), state).toEqual([
        [iso(d1('10:00')), 2, 30, 130],
        [iso(d1('11:00')), 1, 120, 120],
        [iso(d1('12:00')), 1, 50, 170],
      ]);
      expect.soft(await vol('all'), state).toEqual([[iso(DAY1), 4, 200, 170]]);
    });
  });

  it("pump: a late latest sample replaces the rolled-up bucket's last status, an earlier one does not", async () => {
    const p = (time: string, statusID: number, status: string, running: boolean) => ({
      sitePumpID: PUMP,
      timestamp: time,
      statusID,
      status,
      running,
    });
    await upload('pump', [p(d1('10:00'), 1, 'A', true), p(d1('10:30'), 2, 'B', false)], 2);
    await refreshAll(ctx.db);
    const last = async (interval: string) =>
      (await load('pump', [PUMP], DAY1, DAY3, { interval })).map((e) => [
        e.count,
        e.runningPercent,
        e.lastStatusID,
        e.lastStatus,
      ]);
    expect(await last('1h')).toEqual([[2, 50, 2, 'B']]);
    expect(await upload('pump', [p(d1('10:15'), 3, 'C', true)], 1)).toBe(0);
    await expectBoth(async (state) => {
      expect.soft(await last('1h'), state).toEqual([[3, 200 / 3, 2, 'B']]);
    });
    expect(await upload('pump', [p(d1('10:50'), 4, 'D', true)], 1)).toBe(0);
    await expectBoth(async (state) => {
      expect.soft(await last('1h'), state).toEqual([[4, 75, 4, 'D']]);
      expect.soft(await last('1d'), state).toEqual([[4, 75, 4, 'D']]);
    });
  });

  it('background refresh rolls up ended quarters and leaves the one still being written, which summaries read from the logs', async () => {
    await refreshAll(ctx.db);
    // A quarter that cannot end while the test runs: the next one (uploads may be up to 24 h ahead).
    const quarter = 15 * 60_000;
    const open = Math.floor(Date.now() / quarter) * quarter + quarter;
    const openTs = new Date(open + 60_000).toISOString();
    const past = '2026-10-01T03:00:00Z'; // after every other test's data
    expect(
      await upload(
        'sensor',
        sensorLogs(SENSOR, [
          [past, 7],
          [openTs, 8],
        ]),
        2,
      ),
    ).toBe(1);
    // The upload rolled up the ended quarter and marked the open one; the ended one is marked again,
    // as a bulk load would leave it, for the refresher to roll up.
    await markAll(ctx.db, UNITS.sensor, { from: Date.parse(past), to: Date.parse(past) + quarter });
    expect(await marks()).toBe(2);
    // The refresher's passes are counted by kind of equipment (each takes the marks of one kind).
    const passes = new Map<unknown, number>();
    const counted = instrument(ctx.db, (db) => ({
      transaction: (fn) =>
        db.transaction((tx) =>
          fn({
            ...tx,
            query: (sql, params) => {
              if (/DELETE FROM rollup_dirty/.test(sql))
                passes.set(params![0], (passes.get(params![0]) ?? 0) + 1);
              return tx.query(sql, params);
            },
          }),
        ),
    }));
    const refresher = new RollupRefresher(counted, {
      intervalMs: 10,
      batch: 100,
      onError: (err) => expect.fail(String(err)),
    });
    refresher.start();
    try {
      await until(async () => (await marks()) <= 1, 'the ended quarters to be rolled up');
      // Several more whole cycles: the open quarter's mark is still there after them.
      const seen = new Map(passes);
      expect(seen.size).toBeGreaterThan(0);
      await until(
        () => [...seen].every(([kind, n]) => passes.get(kind)! >= n + 3),
        'three more refresh cycles',
      );
    } finally {
      await refresher.stop();
    }
    const left = await ctx.db.query<{ bucket: Date }>('SELECT bucket FROM rollup_dirty');
    expect(left.map((r) => new Date(r.bucket).getTime())).toEqual([open]);
    const from = past;
    const to = new Date(open + quarter).toISOString();
    expect(await load('sensor', [SENSOR], from, to, { interval: 'all' })).toEqual([
      S(SENSOR, from, to, [7, 8]),
    ]);
    // The whole range in hours: the open quarter's hour is read from the logs, the rest from rollups.
    const hours = await load('sensor', [SENSOR], from, to);
    expect(hours.at(-1)).toEqual(
      S(
        SENSOR,
        new Date(Math.floor(open / 3_600_000) * 3_600_000).toISOString(),
        new Date(
          Math.min(Math.floor(open / 3_600_000) * 3_600_000 + 3_600_000, open + quarter),
        ).toISOString(),
        [8],
      ),
    );
  });
});
