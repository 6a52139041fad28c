import { PGlite, types } from '@electric-sql/pglite';
import type { Database, Transaction } from './types.js';

// Same value types as node-postgres: int8 and numeric as strings (bigint ids stay exact).
const asText = (v: string) => v;
const parsers = {
  [types.INT8]: asText,
  [types.NUMERIC]: asText,
  1016: (v: string) => (v === '{}' ? [] : v.slice(1, -1).split(',')), // int8[]
};

/** Embedded PostgreSQL; dataDir undefined means in memory. */
export async function openPglite(dataDir?: string): Promise<Database> {
  const pg = await PGlite.create(dataDir, { parsers });
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
    exec: base.exec,
    listen: (channel, onNotify) => pg.listen(channel, onNotify),
    close: () => pg.close(),
  };
}
