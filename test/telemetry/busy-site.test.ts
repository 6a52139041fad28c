import { expect, it } from 'vitest';
import { describeWith } from '../helper.js';
import { SENSOR, suiteApp } from './fixtures.js';

// Writes of one busy site never wait for each other on the site's row (its LastCommunication): a
// statement skips the row while another one is writing it, and writes it at most once a second.
// PostgreSQL only: PGlite runs one transaction at a time, so no write can hold a row while another
// one runs.
describeWith(['postgres'], 'telemetry at a busy site [postgres]', () => {
  const t = suiteApp('postgres');

  it('stores a reading while another transaction holds the site row, and updates LastCommunication once a second at most', async () => {
    const siteTime = async () =>
      (
        await t.ctx.db.query<{ t: Date | null }>(
          `SELECT last_communication AS t FROM sites WHERE site_id = 1`,
        )
      )[0].t;
    await t.ctx.db.query(`UPDATE sites SET last_communication = NULL WHERE site_id = 1`);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = t.ctx.db.transaction(async (tx) => {
      await tx.query(`SELECT 1 FROM sites WHERE site_id = 1 FOR UPDATE`);
      locked();
      await held;
    });
    await isLocked;
    try {
      const stored = await t.post('readings/sensor', {
        sensorID: SENSOR,
        value: 1,
        timestamp: '2026-06-01T00:00:00Z',
      });
      // Answered while the row is still held: the write did not wait for it.
      expect(stored).toEqual({ status: 201, body: { received: 1, stored: 1, duplicates: 0 } });
      expect(await siteTime()).toBeNull();
    } finally {
      release();
      await holder;
    }
    const before = Date.now();
    await t.post('readings/sensor', {
      sensorID: SENSOR,
      value: 2,
      timestamp: '2026-06-01T00:01:00Z',
    });
    const first = await siteTime();
    expect(first!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    // A second write within the second leaves it; LastCommunication is to the second.
    await t.post('readings/sensor', {
      sensorID: SENSOR,
      value: 3,
      timestamp: '2026-06-01T00:02:00Z',
    });
    const second = await siteTime();
    if (Date.now() - first!.getTime() < 1000) expect(second).toEqual(first);
    else expect(second!.getTime()).toBeGreaterThan(first!.getTime());
  });
});
