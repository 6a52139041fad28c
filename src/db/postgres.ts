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
  const connection = {
    connectionString: url,
    options: opts.schema ? `-c search_path=${opts.schema}` : undefined,
    connectionTimeoutMillis: 10_000,
  };
  const pool = new pg.Pool({
    ...connection,
    max: opts.max ?? 10,
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
  return {
    kind: 'postgres',
    query: base.query,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(q(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    exec: base.exec,
    listen: (channel, onNotify) => listen(connection, channel, onNotify),
    close: () => pool.end(),
  };
}

/**
 * LISTEN on a connection of its own (a pooled one would be handed to others). A lost connection is
 * made again every second until it works; onNotify runs after each connection, since notices sent
 * meanwhile are lost.
 */
async function listen(connection: pg.ClientConfig, channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const connect = async () => {
    const c = new pg.Client(connection);
    let lost = false;
    const again = () => {
      if (lost) return;
      lost = true;
      c.end().catch(() => {});
      if (client === c) client = undefined;
      if (!stopped) timer = setTimeout(() => void connect().catch(() => {}), 1000).unref();
    };
    c.on('error', again);
    c.on('end', again);
    c.on('notification', (m) => m.channel === channel && onNotify(m.payload ?? ''));
    try {
      await c.connect();
      await c.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
    } catch (err) {
      again();
      throw err;
    }
    if (stopped) return void (await c.end().catch(() => {}));
    client = c;
    onNotify('');
  };
  try {
    await connect();
  } catch (err) {
    stopped = true;
    clearTimeout(timer);
    throw err;
  }
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await client?.end().catch(() => {});
  };
}
