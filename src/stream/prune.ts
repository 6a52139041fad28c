import type { Queryable } from '../db/index.js';

// Events are kept for replay for retentionMs, then deleted in small transactions (on PGlite each
// statement holds this thread). Every instance prunes; concurrent deletes of the same rows just
// skip each other's. stream_state.pruned_xid records the newest transaction whose events went.

const CHUNK = 5000;

/** Deletes the events older than the cutoff; returns how many. */
export async function pruneEvents(db: Queryable, olderThan: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const [row] = await db.query<{ n: number }>(
      `WITH d AS (DELETE FROM stream_events WHERE ctid = ANY(ARRAY(SELECT ctid FROM stream_events WHERE at < $1 LIMIT ${CHUNK})) RETURNING xid),
            m AS (SELECT max(xid) AS x, count(*)::int AS n FROM d)
       UPDATE stream_state SET pruned_xid = GREATEST(pruned_xid, m.x) FROM m WHERE m.n > 0 RETURNING m.n`,
      [olderThan.toISOString()],
    );
    total += row?.n ?? 0;
    if (!row || row.n < CHUNK) return total;
    await new Promise((r) => setImmediate(r));
  }
}
