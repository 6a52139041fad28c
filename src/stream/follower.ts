import type { Queryable } from '../db/index.js';
import { PeriodicTask } from '../periodic-task.js';
import { advance, fromSnapshot, type Cursor } from './cursor.js';
import { readEvents, type Page } from './events.js';

// One per instance, while it has subscribers: follows stream_events from its cursor, handing each
// batch of newly committed events to the subscribers. It reads when told that something was
// committed (a write of this instance, a NOTIFY from another one) and at least every pollMs.
// At most one read runs at a time; a request that arrives meanwhile makes one more read after it,
// no sooner than MIN_GAP_MS after the last one began (under a stream of commits, reads back to back
// would keep a database connection busy for a few events each).

/** Events read, each with the position after it; framed only for those someone streams. */
export type Followed = { row: Page['rows'][number]; after: Cursor }[];

const MIN_GAP_MS = 5;

export interface FollowerOptions {
  /** Events read at most per statement (more are read at once, in the next statement). */
  batch: number;
  pollMs: number;
  onEvents: (events: Followed) => void;
  onError: (err: unknown) => void;
}

export class Follower {
  /** What has been handed on; undefined while dormant (no subscribers: nothing is read). */
  cursor: Cursor | undefined;
  private running = false;
  private current: Promise<void> = Promise.resolve();
  private again = false;
  /** Waiting for a read that starts after they asked. */
  private waiting: (() => void)[] = [];
  /** Reads at least every pollMs while active. */
  private poll: PeriodicTask | undefined;
  private lastRead = 0;

  constructor(
    private readonly db: Queryable,
    private readonly opts: FollowerOptions,
  ) {}

  /** Starts following from what is committed now (events committed before are not handed on). */
  async activate(): Promise<void> {
    if (this.cursor) return;
    const [{ snap }] = await this.db.query<{ snap: string }>(
      'SELECT pg_current_snapshot()::text AS snap',
    );
    if (this.cursor) return;
    this.cursor = fromSnapshot(snap);
    this.poll = new PeriodicTask(() => this.kick(), {
      intervalMs: this.opts.pollMs,
      onError: this.opts.onError,
    }).start();
  }

  deactivate(): void {
    this.cursor = undefined;
    void this.poll?.stop();
    this.poll = undefined;
  }

  /** Something was committed: read. */
  kick(): void {
    if (!this.cursor) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.current = this.loop();
  }

  /** Resolves after a read that began after this call: then every event committed before it has been handed on. */
  async catchUp(): Promise<void> {
    if (!this.cursor) return this.activate();
    const done = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.kick();
    return done;
  }

  /** Resolves once no read is running (before the database closes). */
  async idle(): Promise<void> {
    await this.current;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      const wait = this.lastRead + MIN_GAP_MS - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      this.lastRead = performance.now();
      const waiting = this.waiting.splice(0);
      try {
        await this.read();
      } catch (err) {
        this.opts.onError(err);
      }
      waiting.forEach((wake) => wake());
    } while (this.again && this.cursor);
    this.running = false;
    // Deactivated meanwhile: nobody will read for those still waiting.
    this.waiting.splice(0).forEach((wake) => wake());
  }

  private async read(): Promise<void> {
    for (;;) {
      const from = this.cursor;
      if (!from) return;
      const page = await readEvents(this.db, from, this.opts.batch);
      if (this.cursor !== from) return; // deactivated (and perhaps activated again) meanwhile
      const complete = page.rows.length < this.opts.batch;
      const events: Followed = [];
      this.cursor = advance(from, page.snapshot, page.rows, complete, (row, after) =>
        events.push({ row, after }),
      );
      if (events.length) this.opts.onEvents(events);
      if (complete) return;
    }
  }
}
