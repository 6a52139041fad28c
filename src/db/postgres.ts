import pg from 'pg';
import type { Database, QueryOptions, Transaction } from './types.js';
import { INDEX_ORDER, queryWithIndexOrder } from './index-order.js';
import { dropsConnection } from './deadline.js';
import { onConnection, type ConnectionEvents } from './postgres-connection.js';
import { PRIMARY_PROBE, PrimaryWatch } from './primary.js';
import { listen } from './postgres-listen.js';
import { sendStatement, statementName } from './postgres-statement.js';

export interface PostgresOptions {
  /** Sets search_path for every connection (tests use one schema per suite). */
  schema?: string;
  max?: number;
  /** Server-side limit of one statement; default 60 s. */
  statementTimeoutMs?: number;
  /**
   * How long opening a connection may take (default 10 s): the service gives QUERY_TIMEOUT_MS, so
   * that an attempt never outlives the request that needed it, keeping a pool slot.
   */
  connectTimeoutMs?: number;
}

/** Anything that writes, locks or has an effect outside the statement's result. */
const EFFECTS =
  /\b(INSERT|UPDATE|DELETE|MERGE|TRUNCATE|nextval|setval|pg_notify|pg_advisory\w*|pg_try_advisory\w*|pg_terminate_backend|pg_cancel_backend|FOR\s+(NO\s+KEY\s+)?(UPDATE|SHARE|KEY\s+SHARE))\b/i;

/**
 * Whether a statement only reads, so that running it again after its connection broke (a failover)
 * can change nothing: a SELECT (or WITH) naming nothing that writes, locks or notifies. A statement
 * that merely mentions such a word (in a literal, say) is taken for a write: it is then not run
 * again, which is always safe. Writes settle their unknown outcome themselves (src/db/outcome.ts).
 */
export const readsOnly = (sql: string): boolean =>
  /^\s*(SELECT|WITH)\b/i.test(sql) && !EFFECTS.test(sql);

export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<Database> {
  const connection = {
    connectionString: url,
    // JIT compiles a plan for large estimated costs: 100 ms and more of compiling for queries that
    // run in a few milliseconds over indexes (summaries, rollup refresh). Off for this service.
    options: `-c jit=off${opts.schema ? ` -c search_path=${opts.schema}` : ''}`,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
    // A server that vanished without closing the connection is noticed by the kernel in time.
    keepAlive: true,
  };
  const pool = new pg.Pool({
    ...connection,
    max: opts.max ?? 10,
    // The server's own bound, behind the deadlines of bounded views (which cancel sooner).
    statement_timeout: opts.statementTimeoutMs ?? 60_000,
  });
  // Which primary each connection reached (absent: a standby, or not known yet), for the figures
  // of failovers and of the time without a writable primary (src/db/primary.ts).
  const watch = new PrimaryWatch();
  const servers = new WeakMap<pg.Client, string>();
  const events: ConnectionEvents = {
    lost: (client) => watch.lost(client && servers.get(client)),
    succeeded: (client) => watch.succeeded(servers.get(client)),
  };
  // A client that loses its server must not crash the process: an idle one the pool replaces; one
  // in use (between two statements of a transaction) fails its next statement, and is dropped on release.
  pool.on('error', (_err, client) => watch.lost(servers.get(client)));
  // jit=off again on every connection: a DATABASE_URL with its own `options` parameter replaces the
  // options above (pg lets the URL win), and the service's queries must not be compiled whatever
  // the URL says. The same statement says which server the connection reached (PRIMARY_PROBE); it
  // runs before anything the connection is taken for.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    client.query<{ standby: boolean; server: string }>(PRIMARY_PROBE).then(
      ({ rows: [row] }) => {
        if (!row.standby) servers.set(client, row.server);
        watch.reached(row.server, row.standby);
      },
      () => {},
    );
  });
  const q = (c: pg.PoolClient): Transaction => ({
    async query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<T[]> {
      const result = await sendStatement(
        c,
        options?.prepared
          ? { name: statementName(sql), text: sql, values: params }
          : { text: sql, values: params },
      );
      // The caller names the shape of its rows (Queryable.query<T>); pg's is an open record.
      return result.rows as T[];
    },
    async exec(sql) {
      await sendStatement(c, { text: sql });
    },
  });

  /** `again`: whether work that lost its connection may run again on another (onConnection). */
  const connected = <T>(
    ms: number,
    work: (c: pg.PoolClient) => Promise<T>,
    again?: (err: unknown) => boolean,
  ) => onConnection(pool, ms, work, again, events);
  await connected(10_000, (c) => c.query('select 1'));
  // A transaction's connection runs one query at a time: queries sent side by side wait their turn
  // here (pg would queue them too, but that use is deprecated), and COMMIT or ROLLBACK waits for
  // them all, so nothing runs on the connection once it is back in the pool.
  const within = <T>(
    ms: number,
    begin: string,
    fn: (tx: Transaction) => Promise<T>,
    again?: (err: unknown) => boolean,
  ): Promise<T> =>
    connected(
      ms,
      async (client) => {
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
          const result = await fn({
            query: <T>(sql: string, params?: unknown[], options?: QueryOptions) =>
              inTurn(() => queryWithIndexOrder<T>(c, sql, params, options)),
            exec: (sql) => inTurn(() => c.exec(sql)),
          });
          await end('COMMIT');
          return result;
        } catch (err) {
          await end('ROLLBACK').catch(() => {});
          throw err;
        }
      },
      again,
    );

  /** A statement of QueryOptions.indexOrder on its own: in a transaction of its own, for SET LOCAL. */
  const indexOrdered = async <T>(c: pg.PoolClient, sql: string, params?: unknown[]) => {
    await c.query(`BEGIN; ${INDEX_ORDER}`);
    try {
      const result = await sendStatement(c, { text: sql, values: params });
      await c.query('COMMIT');
      return result.rows as T[];
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    }
  };

  // A statement that only reads runs again on a new connection when its own broke (readsOnly).
  const view = (ms: number): Database => ({
    kind: 'postgres',
    query: (sql, params, options) =>
      options?.indexOrder
        ? connected(
            ms,
            (c) => indexOrdered(c, sql, params),
            readsOnly(sql) ? dropsConnection : undefined,
          )
        : connected(
            ms,
            (c) => q(c).query(sql, params, options),
            readsOnly(sql) ? dropsConnection : undefined,
          ),
    transaction: (fn) => within(ms, 'BEGIN', fn),
    // Read only: nothing it did can have been written, so a broken connection means another try.
    snapshot: (fn) =>
      within(ms, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn, dropsConnection),
    exec: (sql) => connected(ms, (c) => q(c).exec(sql)),
    bounded: view,
    listen: (channel, onNotify) => listen(connection, channel, onNotify),
    poolWaiting: () => pool.waitingCount,
    primary: () => watch.figures(),
    close: () => pool.end(),
  });
  return view(Infinity);
}
