import { afterAll, beforeAll, expect, it } from 'vitest';
import { lockDays, moveDaySql } from '../../src/telemetry/archive/days.js';
import { runArchive } from '../../src/telemetry/archive/pass.js';
import { describeArchive } from '../../src/telemetry/archive/report.js';
import { KINDS, type TelemetryKind } from '../../src/telemetry/kinds.js';
import { refreshAll } from '../../src/telemetry/rollups/refresh.js';
import { runRetention } from '../../src/telemetry/retention/pass.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { count, METER, poster, PUMP, SENSOR, SENSOR_2, TANK } from './fixtures.js';
import { logsOf, rollupsOf } from './archive-fixtures.js';

// The archive pass on uploaded logs of every kind: what is due moves into the archive and reads back
// the same; uploads into archived days (late, replayed, replacing) are answered and stored as for a
// twin whose logs were never archived; a day with stale rollups waits; a day that cannot be archived
// is set aside without stopping the others; retention removes archived days with their month. An
// archived day's quarters and hours move with it (compact rollups) and read back the same.

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 20, 12);
const at = (daysAgo: number, minute: number) =>
  new Date(Math.floor(NOW / DAY) * DAY - daysAgo * DAY + minute * 60_000).toISOString();

const records: Record<TelemetryKind, (id: number, ts: string, n: number) => object> = {
  sensor: (id, ts, n) => ({ sensorID: id, value: n / 4, timestamp: ts }),
  meter: (id, ts, n) => ({
    flowMeterID: id,
    timestamp: ts,
    totalVolume: 1000 + n * 0.1,
    ...(n % 7 ? { flowRate: n * 1.5 } : {}),
  }),
  pump: (id, ts, n) => ({
    sitePumpID: id,
    timestamp: ts,
    running: n % 3 === 0,
    status: `s${n % 4}`,
  }),
  tank: (id, ts, n) => ({ siteTankGroupID: id, timestamp: ts, entryTankLevel: 3 + n / 100 }),
};
const ID: Record<TelemetryKind, number> = { sensor: SENSOR, meter: METER, pump: PUMP, tank: TANK };

describeEachBackend('archive pass', (backend) => {
  let ctx: TestContext;
  let post: ReturnType<typeof poster>;
  beforeAll(async () => {
    ctx = await startApp(backend, { settings: { ROLLUP_REFRESH_MS: 0 } });
    post = poster(ctx, await ctx.token('*'));
  });
  afterAll(async () => ctx?.close());

  const upload = async (kind: TelemetryKind, list: object[]) => {
    const res = await post(`logs/${kind}/batch`, list);
    expect(res.status).toBe(201);
    return res.body as { received: number; stored: number; duplicates: number };
  };

  it('moves the due days of every kind, which read back the same', async () => {
    const before: Record<string, string[]> = {};
    for (const kind of Object.keys(records) as TelemetryKind[]) {
      // Days 50 to 47 ago (due with 35 days), and today - 10 days (not due).
      const list = [50, 49, 48, 47, 10].flatMap((d) =>
        Array.from({ length: 90 }, (_, i) => records[kind](ID[kind], at(d, i * 16), d * 1000 + i)),
      );
      await upload(kind, list);
      before[kind] = await logsOf(ctx, kind, ID[kind]);
    }
    await refreshAll(ctx.db);
    const units: Record<string, string[]> = {};
    for (const kind of Object.keys(records) as TelemetryKind[])
      units[kind] = await rollupsOf(ctx, kind, ID[kind]);
    const report = await runArchive(ctx.db, { days: 35, now: NOW });
    expect(report.ran).toBe(true);
    expect(report.failed).toEqual([]);
    for (const kind of Object.keys(records) as TelemetryKind[]) {
      const k = report.kinds.find((x) => x.kind === kind)!;
      expect(k).toMatchObject({ days: 4, logs: 360 });
      expect(k.archiveBytes).toBeLessThan(k.rowBytes);
      expect(await logsOf(ctx, kind, ID[kind])).toEqual(before[kind]);
      // Only the day 10 days ago is still rows.
      expect(await count(ctx.db, KINDS[kind].table)).toBe(90);
      expect(await count(ctx.db, `${kind}_log_days`)).toBe(4);
      // Their quarters and hours are archived too (a row per day and level), their days stay rows;
      // every unit reads back the same, to the bit.
      expect(k.units).toBeGreaterThan(0);
      expect(await count(ctx.db, `${kind}_rollup_days`)).toBe(8);
      expect(
        await count(ctx.db, `${kind}_rollups`, 'level < 1440 AND bucket < $1', [at(46, 0)]),
      ).toBe(0);
      expect(
        await count(ctx.db, `${kind}_rollups`, 'level = 1440 AND bucket < $1', [at(46, 0)]),
      ).toBe(4);
      expect(await rollupsOf(ctx, kind, ID[kind])).toEqual(units[kind]);
    }
    expect(describeArchive(report).join('\n')).toMatch(/sensor: 4 equipment-days, 360 logs/);
    // Nothing is due a second time.
    const again = await runArchive(ctx.db, { days: 35, now: NOW });
    expect(again.kinds.every((k) => k.days === 0)).toBe(true);
  });

  it('uploads into archived days answer and store as if the logs were rows', async () => {
    // SENSOR's days are archived (above); SENSOR_2 gets the same logs, never archived.
    const list = [50, 49, 48, 47, 10].flatMap((d) =>
      Array.from({ length: 90 }, (_, i) => records.sensor(SENSOR_2, at(d, i * 16), d * 1000 + i)),
    );
    await upload('sensor', list);
    const twin = (l: object[]) =>
      l.map((r) => ({ ...(r as object), sensorID: SENSOR_2 }) as { sensorID: number });
    const steps: object[][] = [
      // Replayed: a day's logs again.
      Array.from({ length: 90 }, (_, i) => records.sensor(SENSOR, at(49, i * 16), 49_000 + i)),
      // Late: new times in two archived days, and one in a day never stored.
      [
        records.sensor(SENSOR, at(48, 3), 7),
        records.sensor(SENSOR, at(47, 5), 8),
        records.sensor(SENSOR, at(45, 1), 9),
      ],
      // Replacing: stored times, new values; and a mix of all three.
      [records.sensor(SENSOR, at(50, 0), -1), records.sensor(SENSOR, at(50, 16), -2)],
      [
        records.sensor(SENSOR, at(50, 32), 50_002),
        records.sensor(SENSOR, at(50, 33), 3),
        records.sensor(SENSOR, at(48, 16), 4),
      ],
    ];
    for (const step of steps) {
      const mine = await upload('sensor', step);
      const theirs = await upload('sensor', twin(step));
      expect(mine).toEqual(theirs);
    }
    const a = await logsOf(ctx, 'sensor', SENSOR);
    expect(a).toEqual(await logsOf(ctx, 'sensor', SENSOR_2));
    // The four days are rows again, until a pass archives them again, with day 45 and the twin's
    // five (their uploads rolled up what they wrote, so no stale quarter holds them back).
    expect(await count(ctx.db, 'sensor_log_days', 'sensor_id = $1', [SENSOR])).toBe(0);
    // Their rollups came back with them, and were rolled up again as the twin's were.
    expect(await count(ctx.db, 'sensor_rollup_days', 'sensor_id = $1', [SENSOR])).toBe(0);
    await refreshAll(ctx.db);
    const r = await rollupsOf(ctx, 'sensor', SENSOR);
    expect(r.length).toBeGreaterThan(10);
    expect(r).toEqual(await rollupsOf(ctx, 'sensor', SENSOR_2));
    const report = await runArchive(ctx.db, { days: 35, now: NOW });
    expect(report.kinds[0]).toMatchObject({ kind: 'sensor', days: 10 });
    expect(await logsOf(ctx, 'sensor', SENSOR)).toEqual(a);
    expect(await logsOf(ctx, 'sensor', SENSOR_2)).toEqual(a);
    expect(await rollupsOf(ctx, 'sensor', SENSOR)).toEqual(r);
    expect(await rollupsOf(ctx, 'sensor', SENSOR_2)).toEqual(r);
  });

  it('a day that cannot be archived is set aside; the others are archived', async () => {
    // A time finer than a millisecond (never from an upload): its day cannot be kept exactly.
    await ctx.db.query(
      `INSERT INTO sensor_logs (sensor_id, ts, value) VALUES ($1, $2::timestamptz + interval '1 microsecond', 1), ($1, $3, 2)`,
      [SENSOR, at(40, 0), at(40, 1)],
    );
    await upload('pump', [records.pump(PUMP, at(40, 0), 1)]);
    await refreshAll(ctx.db);
    const report = await runArchive(ctx.db, { days: 35, now: NOW });
    expect(report.failed).toMatchObject([{ kind: 'sensor', id: SENSOR }]);
    expect(report.kinds.find((k) => k.kind === 'pump')!.days).toBe(1);
    expect(
      await count(ctx.db, 'sensor_logs', 'sensor_id = $1 AND ts < $2', [SENSOR, at(39, 0)]),
    ).toBe(2);
    await ctx.db.query(`DELETE FROM sensor_logs WHERE sensor_id = $1 AND ts >= $2 AND ts < $3`, [
      SENSOR,
      at(40, 0),
      at(39, 0),
    ]);
  });

  it('days archived with their rollups left as rows (listed by the migration) have them compacted', async () => {
    // A day archived as before rollups were compacted: its logs moved, its quarters and hours not.
    await upload(
      'meter',
      Array.from({ length: 90 }, (_, i) => records.meter(METER, at(44, i * 16), 44_000 + i)),
    );
    await refreshAll(ctx.db);
    const units = await rollupsOf(ctx, 'meter', METER);
    const day = at(44, 0);
    const next = at(43, 0);
    expect(await ctx.db.query(moveDaySql('meter'), [[METER], day, next])).toEqual([
      { id: METER, n: 90 },
    ]);
    await ctx.db.query(
      `INSERT INTO rollup_days_due (kind, equipment_id, day) VALUES (2, $1, $2), (2, $3, $2)`,
      [METER, day, METER + 999_999],
    );
    expect(
      await count(ctx.db, 'meter_rollups', 'level < 1440 AND bucket >= $1 AND bucket < $2', [
        day,
        next,
      ]),
    ).toBeGreaterThan(0);
    const report = await runArchive(ctx.db, { days: 35, now: NOW });
    expect(report.failed).toEqual([]);
    expect(report.kinds.find((k) => k.kind === 'meter')!.units).toBeGreaterThan(0);
    expect(
      await count(ctx.db, 'meter_rollups', 'level < 1440 AND bucket >= $1 AND bucket < $2', [
        day,
        next,
      ]),
    ).toBe(0);
    expect(
      await count(ctx.db, 'meter_rollup_days', 'meter_id = $1 AND day = $2', [METER, day]),
    ).toBe(2);
    // Struck off, the unknown equipment's entry too.
    expect(await count(ctx.db, 'rollup_days_due')).toBe(0);
    expect(await rollupsOf(ctx, 'meter', METER)).toEqual(units);
  });

  // An upload looks for archived days only once it holds their locks (upload-days.ts): one that
  // looked before, or in the statement that takes them (its snapshot is older than the locks), would
  // miss a day the pass archived while it waited, and store its logs beside the archive row.
  if (backend === 'postgres')
    it('an upload waiting for a day the pass is archiving moves it back once the pass commits', async () => {
      const list = Array.from({ length: 90 }, (_, i) =>
        records.sensor(SENSOR_2, at(46, i * 16), 46_000 + i),
      );
      await upload('sensor', list);
      await refreshAll(ctx.db);
      const [day, next] = [at(46, 0), at(45, 0)];
      /** Uploads waiting for the day's lock (its key as lockDays makes it). */
      const waiting = async () => {
        const [row] = await ctx.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_locks l,
                  (SELECT hashtextextended('sensor_log_days:' || current_schema() || ':' || $1::int || ':' || $2::float8, 0) AS k) x
            WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objsubid = 1
              AND l.classid::text::int8 = (x.k >> 32) & 4294967295 AND l.objid::text::int8 = x.k & 4294967295`,
          [SENSOR_2, Date.parse(day)],
        );
        return row.n;
      };
      let answer: ReturnType<typeof upload> | undefined;
      // What the pass does with the day (pass.ts): its lock, exclusive, then its logs moved.
      await ctx.db.transaction(async (tx) => {
        await lockDays(tx, 'sensor', [SENSOR_2], [Date.parse(day)], 'exclusive');
        expect(await tx.query(moveDaySql('sensor'), [[SENSOR_2], day, next])).toEqual([
          { id: SENSOR_2, n: 90 },
        ]);
        // A log stored again, and a new one, into that day: the upload waits for the day's lock.
        answer = upload('sensor', [list[0], records.sensor(SENSOR_2, at(46, 1), 1)]);
        const end = Date.now() + 10_000;
        while ((await waiting()) === 0) {
          if (Date.now() > end) throw new Error('the upload never waited for the day');
          await new Promise((resolve) => setImmediate(resolve));
        }
      });
      // The day archived meanwhile is moved back and the upload meets its logs as rows.
      expect(await answer).toMatchObject({ received: 2, stored: 1, duplicates: 1 });
      expect(
        await count(ctx.db, 'sensor_log_days', 'sensor_id = $1 AND day = $2', [SENSOR_2, day]),
      ).toBe(0);
      expect(
        await count(ctx.db, 'sensor_logs', 'sensor_id = $1 AND ts >= $2 AND ts < $3', [
          SENSOR_2,
          day,
          next,
        ]),
      ).toBe(91);
    });

  it('retention removes archived days with their months, and keeps their rollups', async () => {
    const days = await count(ctx.db, 'sensor_log_days');
    expect(days).toBeGreaterThan(0);
    const units = await rollupsOf(ctx, 'sensor', SENSOR);
    const r = await runRetention(ctx.db, { days: 15, now: NOW });
    expect(r.ran).toBe(true);
    const horizon = r.after!;
    expect(horizon).toBeGreaterThan(Date.parse(at(47, 0)));
    for (const kind of Object.keys(records))
      expect(
        await count(ctx.db, `${kind}_log_days`, 'day < $1', [new Date(horizon).toISOString()]),
      ).toBe(0);
    expect(await rollupsOf(ctx, 'sensor', SENSOR)).toEqual(units);
  });
});
