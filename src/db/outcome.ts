import { randomUUID } from 'node:crypto';
import { DatabaseTimeout, dropsConnection, errorCode, wroteNothing } from './deadline.js';
import type { Queryable } from './types.js';

// Settling a write whose outcome is unknown. When a connection breaks while its statement or its
// commit runs (the primary died, a failover), the service cannot tell whether the write committed.
// Each upload statement therefore also writes a request id and the result it answers into
// write_outcomes (migration 014), in the same statement, so in the same commit. After such a break
// the id is looked up on a new connection: found, the write committed, and the request is answered
// with the result recorded (the counts or alarms of that attempt); not found, it did not, and it is
// sent again with the same id, so that of two attempts only one can ever commit (the second meets
// the first's key and looks again). Rows are needed for seconds and pruned after OUTCOME_KEEP.

/** How long an outcome is kept (pruneOutcomes); far longer than any request's WRITE_TIMEOUT_MS. */
export const OUTCOME_KEEP = '10 minutes';
/** The primary key of write_outcomes: a violation of it is an earlier attempt that committed. */
const OUTCOME_KEY = 'write_outcomes_pkey';

/** A new request id for one attempt's statement (or each statement of a transaction). */
export const newOutcomeId = (): string => randomUUID();

/**
 * The data-modifying CTE that records an attempt's outcome: `id` is the parameter that holds its id
 * (`$3`), `result` a jsonb expression, over `from` (other CTEs of the statement) when given.
 */
export const outcomeCte = (id: string, result: string, from?: string): string =>
  `outcome AS (INSERT INTO write_outcomes (id, result) SELECT ${id}::uuid, ${result}${from ? ` FROM ${from}` : ''} RETURNING 1)`;

/** The results recorded under these ids, by id (absent: that statement did not commit). */
export async function lookupOutcomes(db: Queryable, ids: string[]): Promise<Map<string, unknown>> {
  const rows = await db.query<{ id: string; result: unknown }>(
    'SELECT id::text AS id, result FROM write_outcomes WHERE id = ANY($1::uuid[])',
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.result]));
}

/** Removes the outcomes older than OUTCOME_KEEP (by the index on `at`); the count removed. */
export async function pruneOutcomes(db: Queryable): Promise<number> {
  const rows = await db.query<{ n: number }>(
    `WITH gone AS (DELETE FROM write_outcomes WHERE at < now() - interval '${OUTCOME_KEEP}' RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
  );
  return rows[0]?.n ?? 0;
}

/** Whether a statement met the outcome of an earlier attempt with its id: that attempt committed. */
export const metEarlierAttempt = (err: unknown): boolean =>
  errorCode(err) === '23505' && (err as { constraint?: unknown }).constraint === OUTCOME_KEY;

/**
 * Whether an attempt that failed so may have committed all the same: its connection broke while it
 * ran. Not a call that ran out of its time (its deadline passed: the request is answered), and not
 * a write a standby refused (nothing was written).
 */
export const outcomeUnknown = (err: unknown): boolean =>
  !(err instanceof DatabaseTimeout) && dropsConnection(err) && !wroteNothing(err);

const pause = (n: number) => Math.min(500, 50 * 2 ** n);

export interface SettleOptions<T> {
  /** The ids the attempt records (one per statement; a transaction of several records them all). */
  ids: string[];
  /** The answer rebuilt from the results recorded under every id (the attempt committed). */
  recorded: (results: Map<string, unknown>) => T;
  /** Epoch ms: no attempt or lookup starts after it (the request's deadline). */
  until: number;
  /** Other failures after which the attempt certainly wrote nothing and may run again. */
  transient?: (err: unknown) => boolean;
  /** Lookups run there (a bounded view; default the attempt's db). */
  lookup: () => Queryable;
}

/**
 * Runs attempt until the write has an outcome the service knows: its own result, or, after a
 * connection broke during it, the result recorded by whichever attempt committed. Another attempt
 * (with the same ids) is made only once a lookup found that none committed. Failures that are not
 * about the connection (a 4xx, a bug) and running out of time end it with that error.
 */
export async function settle<T>(attempt: () => Promise<T>, opts: SettleOptions<T>): Promise<T> {
  let unknown = false;
  for (let n = 0; ; n++) {
    try {
      if (unknown) {
        const found = await lookupOutcomes(opts.lookup(), opts.ids);
        if (found.size === opts.ids.length) return opts.recorded(found);
        // Several statements of a transaction commit together: some recorded but not all cannot be.
        if (found.size) throw new Error('a write recorded part of its outcome');
        unknown = false;
      }
      return await attempt();
    } catch (err) {
      if (metEarlierAttempt(err)) unknown = true;
      else if (outcomeUnknown(err)) unknown = true;
      else if (!(wroteNothing(err) || opts.transient?.(err))) throw err;
      if (Date.now() + pause(n) >= opts.until) throw err;
      await new Promise((r) => setTimeout(r, pause(n)));
    }
  }
}
