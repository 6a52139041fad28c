import { PGlite, types } from '@electric-sql/pglite';
import type { Database, Transaction } from './types.js';
import { INDEX_ORDER, queryWithIndexOrder } from './index-order.js';
import { DatabaseTimeout, withinDeadline } from './deadline.js';
import { TEMPLATE, templateFor, unpackTemplate } from './pglite-template.js';

/** The embedded database is in this process: a call out of time is one it was working on. */
const RUNNING = () => true;

// Same value types as node-postgres: int8 and numeric as strings (bigint ids stay exact).
const asText = (v: string) => v;
const parsers = {
  [types.INT8]: asText,
  [types.NUMERIC]: asText,
  1016: (v: string) => (v === '{}' ? [] : v.slice(1, -1).split(',')), // int8[]
};

// An embedded database has no replicas: wal_level minimal lets bulk loads into tables made or
// emptied in the same transaction (the demo history) skip the write-ahead log. A checkpoint removes
// the log files it no longer needs instead of keeping them for reuse (wal_recycle off; a new file
// is made when needed, without first writing 16 MB of zeros: wal_init_zero off), so a small DATA_DIR
// stays small: after the demo's first start the log holds one or two 16 MB files, not up to 80 MB.
const startParams = [
  ...PGlite.defaultStartParams,
  '-c',
  'wal_level=minimal',
  '-c',
  'max_wal_senders=0',
  '-c',
  'min_wal_size=32MB',
  '-c',
  'wal_recycle=off',
  '-c',
  'wal_init_zero=off',
];

/**
 * The embedded PostgreSQL itself, with the service's settings; dataDir undefined means in memory.
 * `from` is the template file a new dataDir is unpacked from (when there is one), or an archive of a
 * data directory (a backup) to unpack into a dataDir that holds no database yet.
 */
export function createPglite(dataDir?: string, from: string | Blob = TEMPLATE): Promise<PGlite> {
  if (typeof from === 'string' && dataDir && templateFor(dataDir, from))
    unpackTemplate(dataDir, from);
  const loadDataDir = typeof from !== 'string' ? from : undefined;
  return PGlite.create(dataDir, { parsers, loadDataDir, startParams });
}

/** Embedded PostgreSQL behind the Database interface (see createPglite for the arguments). */
export async function openPglite(
  dataDir?: string,
  from: string | Blob = TEMPLATE,
): Promise<Database> {
  return wrapPglite(await createPglite(dataDir, from));
}

/** An open embedded database behind the Database interface; its close() closes it. */
export function wrapPglite(pg: PGlite): Database {
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Transaction => {
    const plain: Transaction = {
      query: async <T>(sql: string, params?: unknown[]) => (await q.query<T>(sql, params)).rows,
      async exec(sql) {
        await q.exec(sql);
      },
    };
    return {
      query: (sql, params, options) => queryWithIndexOrder(plain, sql, params, options),
      exec: plain.exec,
    };
  };
  // PGlite runs in this thread and cannot be interrupted: a call past its deadline is answered at
  // once, and a transaction past it rolls back at its next statement (nothing more of it is written).
  const inTransaction = <T>(
    ms: number,
    setup: string | undefined,
    fn: (tx: Transaction) => Promise<T>,
  ) =>
    withinDeadline(
      ms,
      (expired) =>
        pg.transaction(async (tx) => {
          const checked: Transaction = {
            query: (sql, params, options) =>
              expired()
                ? Promise.reject(new DatabaseTimeout(ms))
                : wrap(tx).query(sql, params, options),
            exec: (sql) =>
              expired() ? Promise.reject(new DatabaseTimeout(ms)) : wrap(tx).exec(sql),
          };
          if (setup) await checked.exec(setup);
          return fn(checked);
        }),
      RUNNING,
    );
  const base = wrap(pg);
  const view = (ms: number): Database => ({
    kind: 'pglite',
    // SET LOCAL needs a transaction: an indexOrder statement gets one of its own.
    query: (sql, params, options) =>
      options?.indexOrder
        ? inTransaction(ms, INDEX_ORDER, (tx) => tx.query(sql, params))
        : withinDeadline(ms, () => base.query(sql, params), RUNNING),
    transaction: (fn) => inTransaction(ms, undefined, fn),
    // PGlite runs one transaction at a time, so this one is consistent anyway; read-only guards it.
    snapshot: (fn) =>
      inTransaction(ms, 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY', fn),
    exec: (sql) => withinDeadline(ms, () => base.exec(sql), RUNNING),
    bounded: view,
    listen: (channel, onNotify) => pg.listen(channel, onNotify),
    close: () => pg.close(),
  });
  return view(Infinity);
}
