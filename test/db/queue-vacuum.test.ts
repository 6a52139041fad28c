import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { Pruner } from '../../src/stream/prune.js';
import { RollupRefresher } from '../../src/telemetry/rollups/refresher.js';
import { describeEachBackend, openTestDb } from '../helper.js';
import { until } from '../wait.js';

// The queue tables (rollup marks, stream events) are filled and emptied all the time. Without a
// VACUUM every deleted row stays in them as a dead row, so they grow for ever where autovacuum does
// not run (PGlite; a PostgreSQL with it off, as the test PostgreSQL runs). The refresher and the
// stream's pruner vacuum them once enough rows have gone. Each test first churns with vacuuming off
// (it must grow, or the measurement could not tell), then, once that space is free, churns twice as
// many rows with vacuuming on: the table must not grow past the size the first churn left.

const ROUNDS = 20;
const ROWS = 2000;
const KB = 1024;

describeEachBackend('queue tables vacuumed by the service', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
    // Autovacuum, where it runs, must not do the service's work during the test.
    for (const table of ['rollup_dirty', 'stream_events'])
      await db.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
  });
  afterAll(() => db?.close());

  const size = async (table: string) =>
    Number(
      (
        await db.query<{ s: string }>(`SELECT pg_relation_size($1::regclass)::text AS s`, [table])
      )[0].s,
    );

  /** `rounds` rounds of ROWS rows in, then out through `take` (which returns when they are gone). */
  const churn = async (
    rounds: number,
    put: (round: number) => Promise<void>,
    take: () => Promise<void>,
  ) => {
    for (let r = 0; r < rounds; r++) {
      await put(r);
      await take();
    }
  };

  let markRound = 0;
  const putMarks = async () => {
    // Marks of quarters long ended (the refresher takes only those), new keys every round.
    const round = markRound++;
    await db.query(
      `INSERT INTO rollup_dirty (kind, equipment_id, bucket)
         SELECT 1, 100000 + g % 100, to_timestamp(1735689600 + ($1::int * ${ROWS} + g) / 100 * 900)
           FROM generate_series(0, ${ROWS - 1}) g`,
      [round],
    );
  };
  const marksLeft = async () =>
    (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM rollup_dirty`))[0].n;

  it('rollup marks: the refresher keeps rollup_dirty from growing', async () => {
    const run = async (vacuumAfter: number, rounds: number) => {
      const refresher = new RollupRefresher(db, {
        intervalMs: 5,
        batch: 5000,
        onError: (err) => {
          throw err;
        },
        vacuumAfter,
      });
      refresher.start();
      try {
        await churn(rounds, putMarks, async () => {
          await until(async () => (await marksLeft()) === 0, 'the refresher to take the marks');
        });
      } finally {
        await refresher.stop();
      }
    };
    const before = await size('rollup_dirty');
    await run(Infinity, ROUNDS);
    const grown = await size('rollup_dirty');
    expect(grown - before).toBeGreaterThan(ROUNDS * ROWS * 30); // a dead row is about 40 bytes
    await db.query('VACUUM rollup_dirty');
    await run(2 * ROWS, 2 * ROUNDS);
    expect(await size('rollup_dirty')).toBeLessThanOrEqual(grown + 64 * KB);
  });

  it('stream events: the pruner keeps stream_events from growing', async () => {
    const putEvents = async () => {
      await db.query(
        `INSERT INTO stream_events (site_id, type, data) SELECT 1, 'reading', repeat('x', 40) FROM generate_series(1, ${ROWS})`,
      );
    };
    const run = async (vacuumAfter: number, rounds: number) => {
      // Retention 0: each run deletes every event committed before it.
      const pruner = new Pruner(db, 0, vacuumAfter);
      await churn(rounds, putEvents, async () => {
        await pruner.run();
        expect((await db.query(`SELECT 1 FROM stream_events LIMIT 1`)).length).toBe(0);
      });
    };
    const before = await size('stream_events');
    await run(Infinity, ROUNDS);
    const grown = await size('stream_events');
    expect(grown - before).toBeGreaterThan(ROUNDS * ROWS * 60);
    await db.query('VACUUM stream_events');
    await run(2 * ROWS, 2 * ROUNDS);
    expect(await size('stream_events')).toBeLessThanOrEqual(grown + 64 * KB);
  });
});
