import { createHash } from 'node:crypto';
import pg, { type QueryResultRow } from 'pg';
import {
  INDEX_ORDER,
  INDEX_ORDER_RESET,
  type Database,
  type QueryOptions,
  type Transaction,
} from './types.js';
import { cancelBackend, DatabaseTimeout, withinDeadline } from './deadline.js';

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
  // A client that loses its server must not crash the process: an idle one the pool replaces; one
  // in use (between two statements of a transaction) fails its next statement, and is dropped on release.
  pool.on('error', () => {});
  // jit=off again on every connection: a DATABASE_URL with its own `options` parameter replaces the
  // options above (pg lets the URL win), and the service's queries must not be compiled whatever
  // the URL says.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    client.query('SET jit = off').catch(() => {});
  });
  const q = (c: pg.PoolClient): Transaction => ({
    async query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<T[]> {
      const result = await send(
        c,
        options?.prepared
          ? { name: statementName(sql), text: sql, values: params }
          : { text: sql, values: params },
      );
      // The caller names the shape of its rows (Queryable.query<T>); pg's is an open record.
      return result.rows as T[];
    },
    async exec(sql) {
      await send(c, { text: sql });
    },
  });

  /**
   * Takes a connection and runs work on it, all within ms. Past the deadline the backend is asked to
   * cancel its statement and the connection is destroyed (the pool opens a new one when needed): a
   * server that stopped answering or a statement waiting on a lock never keeps a pool slot.
   */
  const onConnection = <T>(ms: number, work: (c: pg.PoolClient) => Promise<T>): Promise<T> => {
    let client: pg.PoolClient | undefined;
    let released = false;
    const release = (err?: Error) => {
      if (!client || released) return;
      released = true;
      client.release(err);
    };
    const abandon = () => {
      if (!client || released) return;
      const c = client as pg.PoolClient & {
        processID?: number;
        secretKey?: number;
        host: string;
        port: number;
        connection?: { stream?: { destroy(): void } };
      };
      if (c.processID != null && c.secretKey != null)
        cancelBackend(c.host, c.port, c.processID, c.secretKey);
      release(new Error('deadline passed'));
      c.connection?.stream?.destroy();
    };
    return withinDeadline(
      ms,
      async (expired) => {
        const taken = await pool.connect();
        if (expired()) {
          taken.release(); // too late: hand it back unused
          throw new DatabaseTimeout(ms);
        }
        client = taken;
        try {
          return await work(taken);
        } finally {
          release();
        }
      },
      abandon,
    );
  };

  await onConnection(10_000, (c) => c.query('select 1'));
  // A transaction's connection runs one query at a time: queries sent side by side wait their turn
  // here (pg would queue them too, but that use is deprecated), and COMMIT or ROLLBACK waits for
  // them all, so nothing runs on the connection once it is back in the pool.
  const within = <T>(ms: number, begin: string, fn: (tx: Transaction) => Promise<T>): Promise<T> =>
    onConnection(ms, async (client) => {
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
            inTurn(async () => {
              if (!options?.indexOrder) return c.query<T>(sql, params, options);
              await c.exec(INDEX_ORDER);
              const rows = await c.query<T>(sql, params);
              await c.exec(INDEX_ORDER_RESET);
              return rows;
            }),
          exec: (sql) => inTurn(() => c.exec(sql)),
        });
        await end('COMMIT');
        return result;
      } catch (err) {
        await end('ROLLBACK').catch(() => {});
        throw err;
      }
    });

  /** A statement of QueryOptions.indexOrder on its own: in a transaction of its own, for SET LOCAL. */
  const indexOrdered = async <T>(c: pg.PoolClient, sql: string, params?: unknown[]) => {
    await c.query(`BEGIN; ${INDEX_ORDER}`);
    try {
      const result = await send(c, { text: sql, values: params });
      await c.query('COMMIT');
      return result.rows as T[];
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    }
  };

  const view = (ms: number): Database => ({
    kind: 'postgres',
    query: (sql, params, options) =>
      onConnection(ms, (c) =>
        options?.indexOrder ? indexOrdered(c, sql, params) : q(c).query(sql, params, options),
      ),
    transaction: (fn) => within(ms, 'BEGIN', fn),
    snapshot: (fn) => within(ms, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn),
    exec: (sql) => onConnection(ms, (c) => q(c).exec(sql)),
    bounded: view,
    listen: (channel, onNotify) => listen(connection, channel, onNotify),
    poolWaiting: () => pool.waitingCount,
    close: () => pool.end(),
  });
  return view(Infinity);
}

/**
 * One statement through pg's callback interface, wrapped in a promise of our own, for every statement
 * that returns rows. Not pg's promise interface (`client.query(text)` without a callback): there the
 * values of the rows outlive the statement. Measured on 87 KB text values (an image slice as base64)
 * read one after another: with pg's promise, 70 % of what was allocated between two young-generation
 * collections survived the first (still referenced, as far as that collection could tell) and was
 * moved to the old generation at the next (10 of 15 MB, --trace-gc-nvp), where only a full
 * collection frees it; with a callback, nothing survived.
 * The same held for a pg Query built by hand whose callback was set after it was made, so the
 * difference lies in pg and V8, not in this code. In the server an image bundle of 41 MB made the
 * heap grow by 100 MB before a full collection (the old generation, or the large-object space
 * for values over 128 KB), and resident memory by 55 to 70 MB; with a callback the heap stays
 * within a few MB of where it started, and the bytes die young.
 */
function send(c: pg.PoolClient, config: pg.QueryConfig): Promise<pg.QueryResult<QueryResultRow>> {
  return new Promise<pg.QueryResult<QueryResultRow>>((resolve, reject) =>
    c.query(config, (err: Error | null, result: pg.QueryResult<QueryResultRow>) =>
      err ? reject(err) : resolve(result),
    ),
  ).catch((err: Error) => {
    // As pg's promise does: a stack that leads back to the caller, not to the socket's read.
    Error.captureStackTrace(err);
    throw err;
  });
}

const names = new Map<string, string>();
/**
 * A prepared statement's name: from its text, so one name always means one text (pg prepares it on
 * each connection the first time that connection runs it; a new connection prepares it again).
 */
function statementName(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    if (names.size >= 1000) names.clear();
    name = `s${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    names.set(sql, name);
  }
  return name;
}

/**
 * LISTEN on a connection of its own (a pooled one would be handed to others). A lost connection is
 * made again every second until it works; onNotify runs after each connection, since notices sent
 * meanwhile are lost.
 */
async function listen(
  connection: pg.ClientConfig,
  channel: string,
  onNotify: (payload: string) => void,
): Promise<() => Promise<void>> {
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
