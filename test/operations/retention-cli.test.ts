import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { migrate } from '../../src/db/migrate.js';
import { openPglite } from '../../src/db/pglite.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { targetHorizon } from '../../src/telemetry/retention/horizon.js';
import { rebuildAll } from '../../src/telemetry/rollups/refresh.js';
import { describeEachBackend, openTestDb } from '../helper.js';
import { DAY, equipmentOf, iso, rows, writeLogs } from '../telemetry/retention-fixtures.js';
import { runToEnd } from './process.js';

// `npm run site-monitor -- retention`: one pass with the service's RETENTION_DAYS, printing what it
// dropped (stdout) and its progress (stderr).

const TABLES = ['sensor_logs', 'meter_logs', 'pump_logs', 'tank_logs'];

describeEachBackend('the retention command', (backend) => {
  const dir = mkdtempSync(join(tmpdir(), 'site-monitor-retention-'));
  let pg: Database | undefined;
  let env: Record<string, string>;
  afterAll(async () => {
    await pg?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  /** The database, opened for a look between two runs of the command (PGlite: one process at a time). */
  const withDb = async <T>(fn: (db: Database) => Promise<T>): Promise<T> => {
    if (pg) return fn(pg);
    const db = await openPglite(join(dir, 'data'));
    try {
      return await fn(db);
    } finally {
      await db.close();
    }
  };
  const cli = (days: string) => runToEnd('cli.ts', ['retention'], { ...env, RETENTION_DAYS: days });

  it('removes the archive rows past the horizon and prints what it dropped; a second run drops nothing', async () => {
    if (backend === 'postgres') {
      pg = await openTestDb('postgres');
      const [{ schema }] = await pg.query<{ schema: string }>(`SELECT current_schema() AS schema`);
      const url = new URL(process.env.TEST_DATABASE_URL!);
      url.searchParams.set('options', `-c search_path=${schema}`);
      env = { DATABASE_URL: url.toString() };
    } else env = { DATA_DIR: join(dir, 'data') };
    const from = Date.UTC(new Date().getUTCFullYear() - 4, 0, 1);
    const counts = await withDb(async (db) => {
      if (!pg) await migrate(db);
      await importDocument(db, generateDemo({ sites: 1, transactionsPerSite: 0 }));
      await writeLogs(db, await equipmentOf(db), from, from + 40 * DAY, {
        gapFrom: from,
        gapTo: from,
        reset: from,
      });
      await rebuildAll(db);
      return Promise.all(TABLES.map((t) => rows(db, `${t}_archive`)));
    });

    const first = await cli('400');
    expect(first.code, first.stderr).toBe(0);
    const horizon = iso(targetHorizon(Date.now(), 400));
    expect(first.stdout.trim().split('\n')).toEqual([
      `retention of 400 days: logs before ${horizon} go; horizon moved from none to ${horizon}`,
      ...TABLES.map((t, i) => `${t}_archive: ${counts[i]} rows removed`),
    ]);
    // Progress: each month of each archive as it goes.
    expect(first.stderr).toContain(`sensor_logs_archive ${iso(from).slice(0, 7)}: `);
    expect(first.stderr).toMatch(/done in \d+\.\d s/);
    const second = await cli('400');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim().split('\n')).toEqual([
      `retention of 400 days: logs before ${horizon} go; horizon stays at ${horizon}`,
      'nothing was dropped',
    ]);
    await withDb(async (db) => {
      for (const t of TABLES) expect(await rows(db, `${t}_archive`), t).toBe(0);
    });

    const off = await cli('0');
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout.trim()).toBe('RETENTION_DAYS is 0: every log is kept, nothing was removed');
  });
});
