import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { RollupRefresher } from '../../src/telemetry/rollups/refresher.js';
import { describeEachBackend, openTestDb } from '../helper.js';
import { until } from '../wait.js';

// A burst of uploads has the machine to itself for a while: while uploads keep waiting for a write
// slot, the refresher runs no cycle until the burst has lasted its grace, and takes the marks once
// the uploads stop waiting, or once the grace is over (then at its share of the time).

const MARKS = 500;

describeEachBackend('rollup refresher: the grace of a burst of uploads', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
  });
  afterAll(() => db?.close());

  /** Marks of quarters long ended (the refresher takes only those), of equipment without logs. */
  const putMarks = () =>
    db.query(
      `INSERT INTO rollup_dirty (kind, equipment_id, bucket)
         SELECT 1, 200000 + g % 50, to_timestamp(1735689600 + g / 50 * 900) FROM generate_series(0, ${MARKS - 1}) g`,
    );
  const marksLeft = async () =>
    (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM rollup_dirty`))[0].n;

  const refresher = (busy: () => boolean, busyGraceMs: number) =>
    new RollupRefresher(db, {
      intervalMs: 5,
      batch: 5000,
      onError: (err) => expect.fail(String(err)),
      busy,
      busyGraceMs,
    });

  it('takes no marks while uploads wait within the grace, and all of them once they stop waiting', async () => {
    await putMarks();
    let waiting = true;
    let asked = 0;
    const r = refresher(() => {
      asked++;
      return waiting;
    }, 3_600_000);
    r.start();
    try {
      // Every cycle the refresher would run asks first whether uploads wait.
      await until(() => asked >= 10, 'ten turns of the refresher');
      expect(await marksLeft()).toBe(MARKS);
      waiting = false;
      await until(async () => (await marksLeft()) === 0, 'the refresher to take the marks');
    } finally {
      await r.stop();
    }
  });

  it('takes the marks while uploads still wait once the grace is over', async () => {
    await putMarks();
    const r = refresher(() => true, 0);
    r.start();
    try {
      await until(async () => (await marksLeft()) === 0, 'the refresher to take the marks');
    } finally {
      await r.stop();
    }
  });
});
