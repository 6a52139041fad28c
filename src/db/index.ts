import { mkdirSync } from 'node:fs';
import type { Config } from '../config.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';
import { migrate } from './migrate.js';
import { lockDataDir } from './lock.js';
import type { Database } from './types.js';

export type { Database, Queryable, Row } from './types.js';

/**
 * Opens the configured database (PostgreSQL with DATABASE_URL, else PGlite in DATA_DIR) and migrates it.
 * The embedded one is taken for this process until close() (a second process is refused: DataDirBusyError).
 */
export async function connect(
  config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR'> & Partial<Pick<Config, 'QUERY_TIMEOUT_MS'>>,
): Promise<Database> {
  let db: Database;
  if (config.DATABASE_URL) {
    db = await openPostgres(config.DATABASE_URL, { connectTimeoutMs: config.QUERY_TIMEOUT_MS });
  } else {
    mkdirSync(config.DATA_DIR, { recursive: true });
    const release = lockDataDir(config.DATA_DIR);
    const embedded = await openPglite(config.DATA_DIR).catch((err) => {
      release();
      throw err;
    });
    db = { ...embedded, close: () => embedded.close().finally(release) };
  }
  await migrate(db);
  return db;
}
