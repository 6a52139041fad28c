import { mkdirSync } from 'node:fs';
import type { Settings } from '../settings.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';
import { migrate } from './migrate.js';
import { lockDataDir } from './lock.js';
import type { Database } from './types.js';

export type { Database, Queryable, Row } from './types.js';

/**
 * Opens the configured database (PostgreSQL with DATABASE_URL, else PGlite in DATA_DIR) and migrates it.
 * The embedded one is taken for this process until close() (a second process is refused: DataDirBusyError).
 * `timings` gets the milliseconds of each step (open, migrate).
 */
export async function connect(
  settings: Pick<Settings, 'DATABASE_URL' | 'DATA_DIR'> &
    Partial<Pick<Settings, 'QUERY_TIMEOUT_MS'>>,
  timings: Record<string, number> = {},
): Promise<Database> {
  let lap = performance.now();
  const took = (phase: string) => {
    const now = performance.now();
    timings[phase] = Math.round(now - lap);
    lap = now;
  };
  let db: Database;
  if (settings.DATABASE_URL) {
    db = await openPostgres(settings.DATABASE_URL, { connectTimeoutMs: settings.QUERY_TIMEOUT_MS });
  } else {
    mkdirSync(settings.DATA_DIR, { recursive: true });
    const release = lockDataDir(settings.DATA_DIR);
    const embedded = await openPglite(settings.DATA_DIR).catch((err) => {
      release();
      throw err;
    });
    db = { ...embedded, close: () => embedded.close().finally(release) };
  }
  took('open');
  await migrate(db);
  took('migrate');
  return db;
}
