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
    // JIT compiles a plan for large estimated costs: 100 ms and more of compiling for queries that
    // run in a few milliseconds over indexes (summaries, rollup refresh). Off for this service.
    options: `-c jit=off${opts.schema ? ` -c search_path=${opts.schema}` : ''}`,
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
  // A transaction's connection runs one query at a time: queries sent side by side wait their turn
  // here (pg would queue them too, but that use is deprecated), and COMMIT or ROLLBACK waits for
  // them all, so nothing runs on the connection once it is back in the pool.
  const within = async <T>(begin: string, fn: (tx: Transaction) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    const c = q(client);
    let last: Promise<unknown> = Promise.resolve();
    let ended = false;
    const inTurn = <R>(run: () => Promise<R>): Promise<R> => {
      if (ended) return Promise.reject(new Error('the transaction has ended'));
      const next = last.then(run, run);
      last = next.catch(() => {});
      return next;
    };
    const end = (sql: string) => {
      const done = inTurn(() => c.exec(sql));
      ended = true;
      return done;
    };
    try {
      await client.query(begin);
      const result = await fn({ query: (sql, params) => inTurn(() => c.query(sql, params)), exec: (sql) => inTurn(() => c.exec(sql)) });
      await end('COMMIT');
      return result;
    } catch (err) {
      await end('ROLLBACK').catch(() => {});
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
