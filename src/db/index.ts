import { mkdirSync } from 'node:fs';
import type { Config } from '../config.js';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';
import { migrate } from './migrate.js';
import type { Database } from './types.js';

export type { Database, Queryable, Row } from './types.js';

/** Opens the configured database (PostgreSQL with DATABASE_URL, else PGlite in DATA_DIR) and migrates it. */
export async function connect(config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR'>): Promise<Database> {
  let db: Database;
  if (config.DATABASE_URL) {
    db = await openPostgres(config.DATABASE_URL);
  } else {
    mkdirSync(config.DATA_DIR, { recursive: true });
    db = await openPglite(config.DATA_DIR);
  }
  await migrate(db);
  return db;
}
