import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { binOf } from '../../src/telemetry/rollups/units.js';
import { quartersOf } from '../../src/telemetry/statement.js';
import { describeEachBackend, openTestDb } from '../helper.js';

// An upload that inserts marks the quarters of its entries, found in the service (quartersOf); they
// must be exactly the 15-minute buckets the rollups and summaries use (binOf in SQL), in key order.
describeEachBackend('rollup marks of an upload', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend, { migrate: false });
  });
  afterAll(() => db.close());

  it('are the distinct 15-minute buckets of the entries, as the database bins them, sorted', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.integer({ min: 1, max: 6 }),
            fc.oneof(
              // any millisecond from 1970 to 2100, and times on or next to quarter edges
              fc.integer({ min: 0, max: 4_102_444_800_000 }),
              fc
                .tuple(fc.integer({ min: 0, max: 4_000_000 }), fc.integer({ min: -1, max: 1 }))
                .map(([q, d]) => Math.max(0, q * 900_000 + d)),
            ),
          ),
          { minLength: 1, maxLength: 60 },
        ),
        async (entries) => {
          const ids = entries.map(([id]) => id);
          const times = entries.map(([, t]) => t);
          const rows = await db.query<{ id: number; q: number }>(
            `SELECT DISTINCT id, date_part('epoch', ${binOf(15, 'to_timestamp(t / 1000)')}) * 1000 AS q
               FROM unnest($1::int[], $2::float8[]) AS u(id, t) ORDER BY 1, 2`,
            [`{${ids.join(',')}}`, `{${times.join(',')}}`],
          );
          expect(quartersOf(ids, times)).toEqual([
            rows.map((r) => r.id),
            rows.map((r) => Number(r.q)),
          ]);
        },
      ),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 100) },
    );
  });
});
