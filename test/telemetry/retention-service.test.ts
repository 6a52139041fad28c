import { expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/index.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { targetHorizon } from '../../src/telemetry/retention/horizon.js';
import { rebuildAll } from '../../src/telemetry/rollups/refresh.js';
import { describeEachBackend, openTestDb, testSettings } from '../helper.js';
import { DAY, equipmentOf, rollupCounts, rows, writeLogs } from './retention-fixtures.js';

// Retention in the service: a timer started with the app (here every 100 ms instead of an hour)
// removes old archive rows by itself; none with RETENTION_DAYS=0.

const DAYS = 400;

describeEachBackend('retention in the service', (backend) => {
  const withData = async (fn: (db: Database) => Promise<void>) => {
    const db = await openTestDb(backend);
    try {
      await importDocument(db, generateDemo({ sites: 1, transactionsPerSite: 0 }));
      // Backfill from four years ago: the archive partition; the pass of 400 days takes most of it.
      const from = Date.UTC(new Date().getUTCFullYear() - 4, 0, 1);
      const eq = await equipmentOf(db);
      await writeLogs(db, eq, from, from + 20 * DAY, {
        gapFrom: from,
        gapTo: from,
        reset: from,
      });
      await rebuildAll(db);
      await fn(db);
    } finally {
      await db.close();
    }
  };

  it('runs the pass every RETENTION_INTERVAL_MS from the start, and stops on close', async () => {
    await withData(async (db) => {
      expect(await rows(db, 'sensor_logs_archive')).toBeGreaterThan(0);
      const rollups = await rollupCounts(db);
      const app = await buildApp(
        testSettings({ RETENTION_DAYS: DAYS, RETENTION_INTERVAL_MS: 100, ROLLUP_REFRESH_MS: 0 }),
        { db, logger: false },
      );
      const scheduler = app.telemetry.retention!;
      expect(scheduler).toBeDefined();
      const stop = vi.spyOn(scheduler, 'stop');
      try {
        await app.ready();
        await vi.waitFor(
          async () => {
            for (const t of ['sensor_logs', 'meter_logs', 'pump_logs', 'tank_logs'])
              expect(await rows(db, `${t}_archive`), t).toBe(0);
          },
          { timeout: 30_000, interval: 100 },
        );
        const [horizon] = await db.query<{ value: string }>(
          `SELECT value FROM service_settings WHERE key = 'telemetry_horizon'`,
        );
        expect(Date.parse(horizon.value)).toBe(targetHorizon(Date.now(), DAYS));
        expect(await rollupCounts(db)).toEqual(rollups);
      } finally {
        await app.close();
      }
      expect(stop).toHaveBeenCalledOnce();
    });
  });

  it('has no retention timer with RETENTION_DAYS=0', async () => {
    const db = await openTestDb(backend);
    const app = await buildApp(testSettings({ RETENTION_INTERVAL_MS: 100 }), { db, logger: false });
    try {
      await app.ready();
      expect(app.telemetry.retention).toBeUndefined();
    } finally {
      await app.close();
      await db.close();
    }
  });
});
