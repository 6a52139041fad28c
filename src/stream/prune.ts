import type { Queryable } from '../db/index.js';
import { QueueVacuum } from '../db/vacuum.js';
import { encode, fromSnapshot, type Cursor } from './cursor.js';

// Retention. Every run notes the current snapshot; the events seen by the newest snapshot noted at
// least retentionMs ago are deleted, so every event stays at least that long after its commit. The
// position pruned up to is recorded first (stream_state), then the events go, in small
// transactions (on PGlite each statement holds this thread). Every instance prunes; concurrent
// deletes of the same rows just skip each other's.

const CHUNK = 5000;

export class Pruner {
  private readonly noted: { at: number; snapshot: Cursor }[] = [];
  /**
   * The events it deletes leave dead rows, which nothing else clears where autovacuum does not run
   * (db/vacuum.ts).
   */
  private readonly vacuum: QueueVacuum;

  constructor(
    private readonly db: Queryable,
    private readonly retentionMs: number,
    /** Events deleted after which it vacuums stream_events (default VACUUM_AFTER_ROWS). */
    vacuumAfter?: number,
  ) {
    this.vacuum = new QueueVacuum(db, 'stream_events', vacuumAfter);
  }

  /** Notes the current snapshot and prunes up to the one noted retentionMs ago, if any; returns the events deleted. */
  async run(now = Date.now()): Promise<number> {
    const [{ snap }] = await this.db.query<{ snap: string }>(
      'SELECT pg_current_snapshot()::text AS snap',
    );
    this.noted.push({ at: now, snapshot: fromSnapshot(snap) });
    let upTo: Cursor | undefined;
    while (this.noted.length && this.noted[0].at <= now - this.retentionMs)
      upTo = this.noted.shift()!.snapshot;
    const deleted = upTo ? await pruneEvents(this.db, upTo) : 0;
    await this.vacuum.note(deleted);
    return deleted;
  }
}

/** Deletes the events `upTo` has seen (a snapshot: no partials); returns how many. */
export async function pruneEvents(db: Queryable, upTo: Cursor): Promise<number> {
  const xmax = String(upTo.xmax);
  const xip = upTo.xip.map(String);
  await db.query(
    `UPDATE stream_state SET pruned = $1, pruned_xmax = $2::xid8 WHERE pruned_xmax < $2::xid8`,
    [encode(upTo), xmax],
  );
  let total = 0;
  for (;;) {
    const [{ n }] = await db.query<{ n: number }>(
      `WITH d AS (DELETE FROM stream_events WHERE ctid = ANY(ARRAY(
         SELECT ctid FROM stream_events WHERE xid < $1::xid8 AND xid <> ALL($2::xid8[]) LIMIT ${CHUNK})) RETURNING 1)
       SELECT count(*)::int AS n FROM d`,
      [xmax, xip],
    );
    total += n;
    if (n < CHUNK) return total;
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * A database restored from a dump of another PostgreSQL server may hold events whose transaction ids
 * this server has not reached yet: they would come out as new events once it does. They are deleted
 * at start (an event visible with an id at or past the current snapshot's xmax cannot have been
 * written here), and recorded as pruned, so a client's position from the old server gets a fresh
 * snapshot rather than a replay. Returns how many were deleted.
 */
export async function dropForeignEvents(db: Queryable): Promise<number> {
  const [{ n, top }] = await db.query<{ n: number; top: string | null }>(
    `WITH d AS (DELETE FROM stream_events WHERE xid >= pg_snapshot_xmax(pg_current_snapshot()) RETURNING xid)
     SELECT count(*)::int AS n, max(xid)::text AS top FROM d`,
  );
  if (!n || top === null) return 0;
  const upTo: Cursor = { xmax: Number(top) + 1, xip: [], partials: [] };
  await db.query(
    `UPDATE stream_state SET pruned = $1, pruned_xmax = $2::xid8 WHERE pruned_xmax < $2::xid8`,
    [encode(upTo), String(upTo.xmax)],
  );
  return n;
}
