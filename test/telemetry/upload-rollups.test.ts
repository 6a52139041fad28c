import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { markAll, rebuildAll, refreshAll } from '../../src/telemetry/rollups/refresh.js';
import { UNIT_LIST, UNITS } from '../../src/telemetry/rollups/units.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { until } from '../wait.js';
import { count, METER, poster, SENSOR, SENSOR_2 } from './fixtures.js';

// Uploads roll up the closed quarters they write in their own statement, with the hours and days
// above them; a rollup row another transaction changed meanwhile is left alone and the quarter marked
// stale instead (rollups/rebuild-statement.ts). Whatever the interleaving of uploads (new, late,
// replacing), the refresher and bulk marks, once the marks are gone every rollup row must be what a
// rebuild from the logs alone gives.

const DAY0 = Date.parse('2026-08-03T00:00:00Z');

/** Every rollup row of every kind, as text, in key order. */
async function rollupRows(db: Database) {
  const out: string[] = [];
  for (const spec of UNIT_LIST) {
    const rows = await db.query<Record<string, unknown>>(
      `SELECT * FROM ${spec.rollupTable} ORDER BY ${spec.idColumn}, level, bucket`,
    );
    for (const row of rows)
      out.push(
        `${spec.kind} ${JSON.stringify(row, (_, v: unknown) => (v instanceof Date ? v.toISOString() : v))}`,
      );
  }
  return out;
}

describeEachBackend('rollups written by uploads', (backend) => {
  let ctx: TestContext;
  let post: ReturnType<typeof poster>;
  beforeAll(async () => {
    // The refresher runs all along, never yielding to queued uploads (no grace), so that it races them.
    ctx = await startApp(backend, { settings: { ROLLUP_REFRESH_MS: 5, ROLLUP_BUSY_GRACE_MS: 0 } });
    post = poster(ctx, await ctx.token('*'));
  });
  afterAll(async () => ctx?.close());

  it('a backfill leaves nothing stale: summaries come from rollups the upload wrote', async () => {
    const logs = Array.from({ length: 3 * 96 }, (_, i) => ({
      sensorID: SENSOR,
      timestamp: new Date(DAY0 - 7 * 86_400_000 + i * 15 * 60_000 + 60_000).toISOString(),
      value: i % 17,
    }));
    const res = await post('logs/sensor/batch', logs);
    expect(res.status).toBe(201);
    expect(await count(ctx.db, 'rollup_dirty')).toBe(0);
    // One row per quarter, hour and day, each counting its logs.
    const levels = await ctx.db.query<{ level: number; n: number; logs: number }>(
      `SELECT level, count(*)::int AS n, sum(count)::int AS logs FROM sensor_rollups
        WHERE sensor_id = $1 AND bucket < $2 GROUP BY level ORDER BY level`,
      [SENSOR, new Date(DAY0 - 4 * 86_400_000).toISOString()],
    );
    expect(levels).toEqual([
      { level: 15, n: 288, logs: 288 },
      { level: 60, n: 72, logs: 288 },
      { level: 1440, n: 3, logs: 288 },
    ]);
  });

  // Concurrency needs more than one connection: PostgreSQL only (PGlite runs one statement at a time).
  if (backend === 'postgres')
    it('an upload that finds a rollup row held or changed by another transaction leaves it as that one writes it, and marks its quarter', async () => {
      const base = DAY0 - 3 * 86_400_000;
      const at = (minutes: number) => new Date(base + minutes * 60_000).toISOString();
      const one = (minutes: number, value: number) =>
        post('logs/sensor/batch', [{ sensorID: SENSOR, timestamp: at(minutes), value }]);
      expect((await one(1, 1)).status).toBe(201);
      expect(await count(ctx.db, 'rollup_dirty')).toBe(0);
      const hour = new Date(base).toISOString();
      await ctx.db.transaction(async (tx) => {
        // Another writer changes the hour (a new version of the row) and holds it: a log in the next
        // quarter of that hour is stored without waiting for it.
        await tx.query(
          `UPDATE sensor_rollups SET v_max = 99 WHERE sensor_id = $1 AND level = 60 AND bucket = $2`,
          [SENSOR, hour],
        );
        expect((await one(20, 2)).status).toBe(201);
      });
      const [row] = await ctx.db.query<{ v_max: number; count: number }>(
        `SELECT v_max, count FROM sensor_rollups WHERE sensor_id = $1 AND level = 60 AND bucket = $2`,
        [SENSOR, hour],
      );
      // Not overwritten with what the upload computed, and its quarter left stale for the refresher.
      expect(row).toEqual({ v_max: 99, count: 1 });
      const marks = await ctx.db.query<{ bucket: Date }>(
        `SELECT bucket FROM rollup_dirty WHERE kind = 1 AND equipment_id = $1`,
        [SENSOR],
      );
      expect(marks.map((m) => new Date(m.bucket).toISOString())).toEqual([at(15)]);
    });

  it('whatever the interleaving of concurrent uploads and the refresher, rollups end as a rebuild from the logs gives', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            kind: fc.constantFrom('sensor', 'meter'),
            id: fc.constantFrom(0, 1),
            // Seconds into two days: batches land in the same quarters, hours and days.
            at: fc.array(fc.integer({ min: 0, max: 48 * 3600 - 1 }), {
              minLength: 1,
              maxLength: 40,
            }),
            value: fc.integer({ min: -1000, max: 1000 }),
          }),
          { minLength: 2, maxLength: 24 },
        ),
        fc.boolean(),
        async (batches, markFirst) => {
          // Some runs first mark everything stored (as a bulk load leaves it): the refresher then
          // rebuilds those quarters while the uploads write into them.
          if (markFirst) for (const spec of UNIT_LIST) await markAll(ctx.db, spec);
          const uploads = batches.map((batch) => async () => {
            const records = [...new Set(batch.at)].map((s, j) => {
              const timestamp = new Date(DAY0 + s * 1000).toISOString();
              return batch.kind === 'sensor'
                ? { sensorID: [SENSOR, SENSOR_2][batch.id], timestamp, value: batch.value + j }
                : { flowMeterID: METER, timestamp, totalVolume: batch.value + j, flowRate: j };
            });
            const res = await post(`logs/${batch.kind}/batch`, records);
            expect(res.status, JSON.stringify(res.body)).toBe(201);
          });
          // Four at a time, so that on PostgreSQL statements of the same equipment overlap.
          const queue = [...uploads];
          await Promise.all(
            Array.from({ length: 4 }, async () => {
              for (let next = queue.shift(); next; next = queue.shift()) await next();
            }),
          );
          // What the background refresher has not taken yet is taken here too, until no mark is left
          // (a mark it holds right now is skipped by this refresh and gone once it commits).
          await until(async () => {
            await refreshAll(ctx.db);
            return (await count(ctx.db, 'rollup_dirty')) === 0;
          }, 'every mark to be taken');
          const written = await rollupRows(ctx.db);
          await rebuildAll(ctx.db);
          const rebuilt = await rollupRows(ctx.db);
          // Only the rows that differ, both ways, so that a failure says which buckets.
          const fromLogs = new Set(rebuilt);
          const kept = new Set(written);
          expect({
            notFromLogs: written.filter((row) => !fromLogs.has(row)),
            missing: rebuilt.filter((row) => !kept.has(row)),
          }).toEqual({ notFromLogs: [], missing: [] });
        },
      ),
      // A failing interleaving does not come back when replayed: shrinking would only rerun runs
      // until the test's timeout hides the failure, so the first one is reported as it is.
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 15), endOnFailure: true },
    );
    // The data the property wrote is there: two days of rollups for the equipment it used.
    expect(
      await count(ctx.db, UNITS.sensor.rollupTable, 'level = 1440 AND bucket >= $1', [
        new Date(DAY0).toISOString(),
      ]),
    ).toBeGreaterThan(0);
  });
});
