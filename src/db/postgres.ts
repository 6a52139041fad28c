import pg from 'pg';
import type { Database, Transaction } from './types.js';

export interface PostgresOptions {
  /** Sets search_path for every connection (tests use one schema per suite). */
  schema?: string;
  max?: number;
  /** Server-side limit of one statement; default 60 s. */
  statementTimeoutMs?: number;
}

export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 10,
    options: opts.schema ? `-c search_path=${opts.schema}` : undefined,
    connectionTimeoutMillis: 10_000,
    // A database that stops answering must turn into errors, not requests that wait for ever.
    statement_timeout: opts.statementTimeoutMs ?? 60_000,
  });
  // An idle client that loses its server must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const q = (c: pg.Pool | pg.PoolClient): Transaction => ({
    async query(sql, params) {
      return (await c.query(sql, params as any[])).rows;
    },
    async exec(sql) {
      await c.query(sql);
    },
  });
  const base = q(pool);
  await base.query('select 1');
  const within = async <T>(begin: string, fn: (tx: Transaction) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    try {
      await client.query(begin);
      const result = await fn(q(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  };
  return {
    kind: 'postgres',
    query: base.query,
    transaction: (fn) => within('BEGIN', fn),
    snapshot: (fn) => within('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn),
    exec: base.exec,
    close: () => pool.end(),
  };
}
