import type { QueryOptions, Transaction } from './types.js';

/**
 * The planner settings of QueryOptions.indexOrder, local to a transaction: a sort or a bitmap scan is
 * then taken only where no plan without one exists. A plan that must keep one is costed ten billion
 * higher, which would make PostgreSQL compile it (JIT, a second and more): JIT is off too. The sorts
 * that remain are of what the statement returns (a summary page's lines, at most 25,000, by
 * equipment): work_mem lets them happen in memory rather than on disk.
 */
export const INDEX_ORDER = `SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off; SET LOCAL jit = off; SET LOCAL work_mem = '32MB'`;
/** Back to the session's settings, for a transaction that goes on after such a statement. */
export const INDEX_ORDER_RESET = `RESET enable_sort; RESET enable_bitmapscan; RESET jit; RESET work_mem`;

/**
 * Runs a statement in an open transaction; with options.indexOrder under INDEX_ORDER for that
 * statement alone (the transaction goes on with the session's settings after it).
 */
export async function queryWithIndexOrder<T>(
  tx: Transaction,
  sql: string,
  params?: unknown[],
  options?: QueryOptions,
): Promise<T[]> {
  if (!options?.indexOrder) return tx.query<T>(sql, params, options);
  await tx.exec(INDEX_ORDER);
  const rows = await tx.query<T>(sql, params);
  await tx.exec(INDEX_ORDER_RESET);
  return rows;
}
