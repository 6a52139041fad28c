import { PGlite, types } from '@electric-sql/pglite';
import type { Database, Transaction } from './types.js';
import { TEMPLATE, templateFor } from './pglite-template.js';

// Same value types as node-postgres: int8 and numeric as strings (bigint ids stay exact).
const asText = (v: string) => v;
const parsers = {
  [types.INT8]: asText,
  [types.NUMERIC]: asText,
  1016: (v: string) => (v === '{}' ? [] : v.slice(1, -1).split(',')), // int8[]
};

// An embedded database has no replicas: wal_level minimal lets bulk loads into tables made or
// emptied in the same transaction (the demo history) skip the write-ahead log, and two 16 MB log
// files are kept for reuse instead of 80 MB, so a small DATA_DIR stays small.
const startParams = [...PGlite.defaultStartParams, '-c', 'wal_level=minimal', '-c', 'max_wal_senders=0', '-c', 'min_wal_size=32MB'];

/** Embedded PostgreSQL; dataDir undefined means in memory. A new dataDir is unpacked from the template when there is one. */
export async function openPglite(dataDir?: string, template = TEMPLATE): Promise<Database> {
  const loadDataDir = dataDir ? templateFor(dataDir, template) : undefined;
  const pg = await PGlite.create(dataDir, { parsers, loadDataDir, startParams });
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Transaction => ({
    async query(sql, params) {
      return (await q.query(sql, params as any[])).rows as any[];
    },
    async exec(sql) {
      await q.exec(sql);
    },
  });
  const base = wrap(pg);
  return {
    kind: 'pglite',
    query: base.query,
    transaction: (fn) => pg.transaction((tx) => fn(wrap(tx))),
    // PGlite runs one transaction at a time, so this one is consistent anyway; read-only guards it.
    snapshot: (fn) =>
      pg.transaction(async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        return fn(wrap(tx));
      }),
    exec: base.exec,
    listen: (channel, onNotify) => pg.listen(channel, onNotify),
    close: () => pg.close(),
  };
}
