import type { Database } from '../../db/index.js';
import type { Transaction } from '../../db/types.js';
import { LOG_TABLES } from './tables.js';

// The locks of retention. One pass at a time: on PostgreSQL an advisory lock held by an otherwise
// idle transaction for the whole pass (several instances share the database); PGlite belongs to one
// process, so a flag. And each step's short lock on the four log tables.

/** Two-key advisory lock: this number, and the schema (test suites share one PostgreSQL). */
const LOCK_KEY = 7303;
/** How long a step waits for the log tables' lock (uploads and summaries wait behind it meanwhile). */
const LOCK_WAIT_MS = 2000;
const LOCK_ATTEMPTS = 3;
export const LOCKED_TOO_LONG = `the log tables stayed locked (long reads or writes) for ${LOCK_ATTEMPTS} × ${LOCK_WAIT_MS / 1000} s`;

const localPasses = new Set<number>();

/** Runs work unless another pass holds the lock (`key`: retention's, or another pass's); true when it ran. */
export async function exclusively(
  db: Database,
  work: () => Promise<void>,
  key = LOCK_KEY,
): Promise<boolean> {
  if (db.kind === 'pglite') {
    if (localPasses.has(key)) return false;
    localPasses.add(key);
    try {
      await work();
      return true;
    } finally {
      localPasses.delete(key);
    }
  }
  // The lock's transaction stays open, idle, while the work runs on other connections of the pool
  // (so a pass needs a pool of two at least); should this process die, the connection closes and the
  // lock goes with it.
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ locked: boolean }>(
      `SELECT pg_try_advisory_xact_lock(${key}, hashtext(current_schema())) AS locked`,
    );
    if (!row.locked) return false;
    await work();
    return true;
  });
}

/**
 * Runs fn in a transaction that first locks the four log tables: against writers only (readers go on)
 * or, to drop partitions, against everyone. A lock not granted within LOCK_WAIT_MS (a long summary, a
 * stuck upload) is given up, so that requests never queue long behind it; tried LOCK_ATTEMPTS times.
 */
export async function locked<T>(
  db: Database,
  drop: boolean,
  fn: (tx: Transaction) => Promise<T>,
): Promise<T | 'busy'> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        await tx.query(`SET LOCAL lock_timeout = '${LOCK_WAIT_MS}ms'`);
        await tx.query(
          `LOCK TABLE ${LOG_TABLES.join(', ')} IN ${drop ? 'ACCESS EXCLUSIVE' : 'SHARE ROW EXCLUSIVE'} MODE`,
        );
        return fn(tx);
      });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      // 55P03: lock not available; 40P01: deadlock (nothing was done).
      if ((code !== '55P03' && code !== '40P01') || attempt >= LOCK_ATTEMPTS) {
        if (code === '55P03' || code === '40P01') return 'busy';
        throw err;
      }
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}
