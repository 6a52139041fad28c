import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { Partitions } from '../../src/telemetry/partitions.js';
import { describeEachBackend, openTestDb } from '../helper.js';

// A write checks that its months have partitions before it is sent. Known months cost nothing to
// wait for; a time past them creates the months up to it first.

describeEachBackend('log partitions', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
  });
  afterAll(() => db.close());

  const months = async () =>
    (await db.query<{ month: Date }>('SELECT month FROM telemetry_months ORDER BY month')).map(
      (r) => new Date(r.month).toISOString().slice(0, 7),
    );

  it('answers at once for months that exist, and creates the months up to a later time first', async () => {
    const partitions = new Partitions(db);
    // A new instance knows no months yet: it asks the database (which has them from the migration).
    await partitions.cover(Date.now());
    // Now known: nothing to wait for.
    expect(partitions.cover(Date.now())).toBeUndefined();
    const later = Date.UTC(new Date().getUTCFullYear() + 1, 5, 15);
    expect((await months()).includes(new Date(later).toISOString().slice(0, 7))).toBe(false);
    const creating = partitions.cover(later);
    expect(creating).toBeInstanceOf(Promise);
    await creating;
    expect(await months()).toContain(new Date(later).toISOString().slice(0, 7));
    // Every month between, too: an insert never finds no partition.
    const all = await months();
    for (let i = 1; i < all.length; i++) {
      const [y, m] = all[i - 1].split('-').map(Number);
      expect(all[i]).toBe(new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 7));
    }
    await db.query(`INSERT INTO sensor_logs (sensor_id, ts, value) VALUES (1, $1, 2)`, [
      new Date(later).toISOString(),
    ]);
    expect(partitions.cover(later)).toBeUndefined();
  });
});
