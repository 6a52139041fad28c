import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Database, Queryable } from './types.js';

const dir = fileURLToPath(new URL('./migrations/', import.meta.url));

const migrationFiles = () =>
  readdirSync(dir)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort();

/** The schema version this build migrates to: the number of its last migration. */
export const latestVersion = (): number => Number(migrationFiles().at(-1)!.slice(0, 3));

/** The database's schema version (its last applied migration); undefined when it has none (not a site-monitor database). */
export async function schemaVersion(db: Queryable): Promise<number | undefined> {
  const [known] = await db.query<{ ok: boolean }>(
    `SELECT to_regclass('schema_migrations') IS NOT NULL AS ok`,
  );
  if (!known.ok) return undefined;
  const [row] = await db.query<{ v: number | null }>(
    `SELECT max(version) AS v FROM schema_migrations`,
  );
  return row.v ?? undefined;
}

/** Applies every migrations/NNN_name.sql not yet applied, in order, each in its own transaction. */
export async function migrate(db: Database): Promise<string[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const files = migrationFiles();
  const applied: string[] = [];
  for (const file of files) {
    const version = Number(file.slice(0, 3));
    const done = await db.transaction(async (tx) => {
      // Two instances starting together on one PostgreSQL must not both apply a migration.
      await tx.query('SELECT pg_advisory_xact_lock(7301)');
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [version]);
      if (seen.length) return false;
      await tx.exec(readFileSync(join(dir, file), 'utf8'));
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        version,
        file,
      ]);
      return true;
    });
    if (done) applied.push(file);
  }
  return applied;
}
