import { expect, it } from 'vitest';
import {
  markAll,
  pendingBuckets,
  refreshAll,
  refreshMarked,
} from '../../src/telemetry/rollups/refresh.js';
import type { SetAside } from '../../src/telemetry/rollups/set-aside.js';
import { UNITS } from '../../src/telemetry/rollups/units.js';
import type { Database } from '../../src/db/index.js';
import { describeEachBackend } from '../helper.js';
import { count, SENSOR, SENSOR_2, suiteApp } from './fixtures.js';
import { sensorLogs, sensorSummary, storeLogs, summaryLoader } from './download-fixtures.js';

// No poison: a bucket whose rollup cannot be rebuilt (injected straight into the database: two values
// whose sum overflows a double) is set aside, and every other bucket is still rolled up; the bad one
// keeps its mark (summaries read it from the logs), waits, and is rolled up once it can be.

/** Two values in one quarter of SENSOR_2 whose sum overflows, as uploads once took them, and its mark. */
async function injectFailingBucket(db: Database, quarter: string) {
  await db.query(
    `INSERT INTO sensor_logs (sensor_id, ts, value)
       VALUES ($1, $2::timestamptz, 1e308), ($1, $2::timestamptz + interval '1 minute', 1e308)`,
    [SENSOR_2, quarter],
  );
  await db.query(`INSERT INTO rollup_dirty (kind, equipment_id, bucket) VALUES (1, $1, $2)`, [
    SENSOR_2,
    quarter,
  ]);
}

describeEachBackend('a bucket whose rollup fails', (backend) => {
  const t = suiteApp(backend, { ROLLUP_REFRESH_MS: 0 });

  it('is set aside, and the others still refresh', async () => {
    const { db } = t.ctx;
    const good: [string, number][] = [
      ['2026-02-03T00:05:00Z', 1],
      ['2026-02-03T06:20:00Z', 3],
      ['2026-02-04T12:00:00Z', 5],
    ];
    await storeLogs(t.ctx, t.token, 'sensor', sensorLogs(SENSOR, good));
    await injectFailingBucket(db, '2026-02-03T09:00:00Z');
    // The good quarters marked as a bulk load leaves them (uploads roll ended quarters up themselves).
    await markAll(db, UNITS.sensor);
    expect(await count(db, 'rollup_dirty')).toBe(4);

    const setAside: SetAside[] = [];
    const taken = await refreshMarked(
      db,
      UNITS.sensor,
      100,
      false,
      {},
      {
        onSetAside: (mark) => setAside.push(mark),
      },
    );
    expect(taken).toBe(4);
    expect(setAside).toEqual([
      { kind: 'sensor', equipmentId: SENSOR_2, bucket: '2026-02-03T09:00:00Z', failures: 1 },
    ]);
    // The good buckets are rolled up; only the bad one's mark is left, set aside.
    expect(await count(db, 'rollup_dirty')).toBe(1);
    expect(await count(db, 'rollup_dirty', 'equipment_id = $1', [SENSOR_2])).toBe(1);
    expect(await count(db, 'sensor_rollups', 'sensor_id = $1 AND level = 1440', [SENSOR])).toBe(2);
    expect(await pendingBuckets(db, 100, { setAsideOnly: true })).toBe(1);
    const load = summaryLoader(t.ctx, t.token);
    expect(
      await load('sensor', [SENSOR], '2026-02-03T00:00:00Z', '2026-02-05T00:00:00Z', {
        interval: '1d',
      }),
    ).toMatchObject([
      sensorSummary(SENSOR, '2026-02-03T00:00:00Z', '2026-02-04T00:00:00Z', [1, 3]),
      sensorSummary(SENSOR, '2026-02-04T00:00:00Z', '2026-02-05T00:00:00Z', [5]),
    ]);

    // While it waits, a refresh leaves it alone (and ends); once its wait is over and its logs can
    // be summed, it is rolled up like any other.
    expect(await refreshAll(db)).toBe(0);
    await db.query(`DELETE FROM sensor_logs WHERE sensor_id = $1 AND ts = '2026-02-03T09:01:00Z'`, [
      SENSOR_2,
    ]);
    await db.query(`UPDATE rollup_dirty SET retry_after = now() - interval '1 second'`);
    expect(await refreshAll(db)).toBe(1);
    expect(await count(db, 'rollup_dirty')).toBe(0);
    expect(await count(db, 'sensor_rollups', 'sensor_id = $1 AND level = 15', [SENSOR_2])).toBe(1);
  });

  it('fails again later with a longer wait each time, up to an hour', async () => {
    const { db } = t.ctx;
    await injectFailingBucket(db, '2026-02-05T09:00:00Z');
    const failures: number[] = [];
    const waits: number[] = [];
    for (let i = 0; i < 3; i++) {
      await db.query(
        `UPDATE rollup_dirty SET retry_after = now() - interval '1 second' WHERE retry_after IS NOT NULL`,
      );
      await refreshMarked(
        db,
        UNITS.sensor,
        100,
        false,
        {},
        {
          onSetAside: (mark) => failures.push(mark.failures),
        },
      );
      const [row] = await db.query<{ wait: number }>(
        `SELECT date_part('epoch', retry_after - now()) AS wait FROM rollup_dirty`,
      );
      waits.push(row.wait);
    }
    expect(failures).toEqual([1, 2, 3]);
    expect(waits[1]).toBeGreaterThan(waits[0]);
    expect(waits[2]).toBeGreaterThan(waits[1]);
    expect(waits[2]).toBeLessThanOrEqual(3600);
  });
});
