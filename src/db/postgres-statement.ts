import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { QueryResultRow } from 'pg';

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
export function sendStatement(
  c: pg.PoolClient,
  config: pg.QueryConfig,
): Promise<pg.QueryResult<QueryResultRow>> {
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
export function statementName(sql: string): string {
  let name = names.get(sql);
  if (!name) {
    if (names.size >= 1000) names.clear();
    name = `s${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    names.set(sql, name);
  }
  return name;
}
