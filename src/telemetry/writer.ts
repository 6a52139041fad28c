import type { Database } from '../db/index.js';
import { serverError, UNSTORED } from '../errors.js';
import { DatabaseTimeout, isDatabaseUnavailable } from '../db/deadline.js';
import { GroupWriter } from './group-writer.js';
import { keysOf, type Counts, type Job, type StoredByKind } from './jobs.js';
import type { Partitions } from './partitions.js';

export type { StoredByKind } from './jobs.js';

// Group commit. Requests that arrive while earlier writes are in flight wait in a queue; when a
// write ends, everything queued goes to the database together, in one statement (one round trip,
// one commit) or, when two requests share a key, one transaction of a statement per round. Each
// request is answered only after that commit, with its own counts. Jobs are validated and checked
// before they are queued, so they cannot fail one another; should a group fail for a reason other
// than the database being unreachable, each job is tried alone so that only the bad one fails.
// At low load nothing waits beyond one turn of the event loop: a request is written as soon as a
// write slot is free. How a group is written to the database: group-writer.ts.

export interface WriterOptions {
  /** false: every request is its own statement (to measure what grouping gains). */
  group: boolean;
  /** Writes in flight at once (PGlite runs one statement at a time: 1). */
  maxInFlight: number;
  /** Writes in flight at once that touch the same tables (see laneOf). */
  maxPerLane: number;
  /**
   * Writes of the readings lane in flight at once (default maxPerLane). Readings of one site update
   * the same current-value rows, so a statement more in flight mostly waits for the others' locks;
   * log statements write rows of their own and wait only for their commits' flushes.
   */
  maxReadings?: number;
  /** Called after each commit (the live stream looks for the events the write stored). */
  onCommit?: () => void;
  /**
   * Called after each commit, before onCommit, with its jobs and the id of the transaction that
   * stored them (undefined when not known; the rule evaluator keeps their entries for a while: the
   * samples of the events of that transaction it is about to read).
   */
  onJobs?: (jobs: Job[], xid: string | undefined) => void;
  /** Called after each commit for every job of it, with the records it stored per kind (the ingest metrics). */
  onStored?: (job: Job, stored: StoredByKind) => void;
}

const total = (stored: StoredByKind) => {
  let n = 0;
  for (const v of Object.values(stored)) n += v ?? 0;
  return n;
};

interface Pending {
  job: Job;
  /** Epoch ms: the request is answered 500 then, whatever its write is doing. */
  deadline: number;
  resolve: (c: Counts) => void;
  reject: (e: unknown) => void;
  timer?: NodeJS.Timeout;
}

interface Lane {
  queue: Pending[];
  inFlight: number;
  /** Writes of this lane in flight at most. */
  limit: number;
}

/** A group fills up to about one batch: grouping pays for small requests; big batches gain nothing by waiting for each other. */
const MAX_GROUP_ROWS = 1000;
const MAX_ROUNDS = 4;
const READINGS = 'readings';

const failure = (cause: unknown) => Object.assign(serverError(UNSTORED), { cause });

/**
 * Jobs that touch the same tables share a lane; lanes never wait for each other. A lock on one table
 * (sensor_logs) stalls only the uploads that write it, and those hold at most maxPerLane connections:
 * pump readings, other kinds' logs and every read go on. Readings of every kind share one table.
 */
export function laneOf(job: Job): string {
  if (job.role === 'reading') return READINGS;
  const kinds = new Set<string>();
  for (const e of job.entries) kinds.add(e.kind);
  return `logs:${[...kinds].sort().join(',')}`;
}

export class TelemetryWriter {
  private readonly lanes = new Map<string, Lane>();
  private readonly groups: GroupWriter;
  private inFlight = 0;
  private queued = 0;
  /** Epoch ms at which uploads last waited for a free write slot. */
  private lastWaited = 0;
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    db: Database,
    partitions: Partitions,
    private readonly opts: WriterOptions,
  ) {
    this.groups = new GroupWriter(db, partitions);
  }

  /**
   * Stores a job; resolves with its counts once committed, rejects with a 500 when it could not be
   * stored by `deadline` (epoch ms; a job still queued then is dropped, one being written is cancelled).
   */
  submit(job: Job, deadline: number): Promise<Counts> {
    if (!job.entries.length)
      return Promise.resolve({ received: job.received, stored: 0, duplicates: job.received });
    return new Promise((resolve, reject) => {
      const key = laneOf(job);
      let lane = this.lanes.get(key);
      if (!lane) {
        const limit =
          key === READINGS ? (this.opts.maxReadings ?? this.opts.maxPerLane) : this.opts.maxPerLane;
        this.lanes.set(key, (lane = { queue: [], inFlight: 0, limit }));
      }
      const pending: Pending = { job, deadline, resolve, reject };
      const queue = lane.queue;
      pending.timer = setTimeout(
        () => {
          const at = queue.indexOf(pending);
          if (at >= 0) {
            queue.splice(at, 1);
            this.queued--;
            this.wakeIfIdle();
          }
          reject(failure(new DatabaseTimeout(deadline - Date.now())));
        },
        Math.max(0, deadline - Date.now()),
      );
      queue.push(pending);
      this.queued++;
      // Start writing after the requests that arrived together with this one have been queued too
      // (PGlite runs in this thread: without this turn it would write every request on its own).
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  /**
   * Whether uploads are arriving faster than they are written: some waited for a write slot within
   * the last `ms` (the rollup refresher then yields, see RollupRefresher).
   */
  busy(ms = 1000): boolean {
    return Date.now() - this.lastWaited < ms;
  }

  /** Resolves once nothing is queued or being written (at shutdown: before the database closes). */
  idle(): Promise<void> {
    if (!this.queued && !this.inFlight) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private wakeIfIdle(): void {
    if (!this.queued && !this.inFlight) this.idleWaiters.splice(0).forEach((wake) => wake());
  }

  private pump(): void {
    for (const lane of this.lanes.values()) {
      while (
        lane.queue.length &&
        this.inFlight < this.opts.maxInFlight &&
        lane.inFlight < lane.limit
      ) {
        const group = this.opts.group ? this.take(lane.queue) : [[lane.queue.shift()!]];
        const n = group.flat().length;
        this.queued -= n;
        this.inFlight++;
        lane.inFlight++;
        void this.run(group).finally(() => {
          this.inFlight--;
          lane.inFlight--;
          this.pump();
          this.wakeIfIdle();
        });
      }
      if (lane.queue.length) this.lastWaited = Date.now();
    }
  }

  /** The queued jobs that go together: up to a size, and up to MAX_ROUNDS occurrences of one key. */
  private take(queue: Pending[]): Pending[][] {
    const rounds: Pending[][] = [];
    const roundOf = new Map<string, number>();
    let rows = 0;
    while (queue.length) {
      const next = queue[0];
      if (rounds.length && rows + next.job.entries.length > MAX_GROUP_ROWS) break;
      if (!rounds.length && next.job.entries.length >= MAX_GROUP_ROWS) return [[queue.shift()!]];
      let r = 0;
      // A job that goes alone needs no key comparison.
      const keys = queue.length > 1 || rounds.length ? keysOf(next.job) : [];
      for (const key of keys) {
        const seen = roundOf.get(key);
        if (seen !== undefined && seen >= r) r = seen + 1;
      }
      if (r >= MAX_ROUNDS) break;
      for (const key of keys) roundOf.set(key, r);
      (rounds[r] ??= []).push(queue.shift()!);
      rows += next.job.entries.length;
    }
    return rounds;
  }

  private async run(rounds: Pending[][]): Promise<void> {
    const all = rounds.flat();
    const settle = () => all.forEach((p) => clearTimeout(p.timer));
    try {
      // The group's write may take as long as its most patient request; each request is answered at its own deadline.
      const { stored, xid } = await this.groups.write(
        rounds.map((r) => r.map((p) => p.job)),
        Math.max(...all.map((p) => p.deadline)),
      );
      if (this.opts.onJobs)
        try {
          this.opts.onJobs(
            all.map((p) => p.job),
            xid,
          );
        } catch {
          // An observer only: a failing one must not turn a committed write into a failure.
        }
      this.opts.onCommit?.();
      settle();
      all.forEach((p, i) => {
        const n = total(stored[i]);
        p.resolve({ received: p.job.received, stored: n, duplicates: p.job.received - n });
      });
      this.report(all, stored);
    } catch (err) {
      if (all.length > 1 && !isDatabaseUnavailable(err)) {
        // Something in one job that validation did not catch: find it by writing each alone.
        await Promise.all(all.map((p) => this.run([[p]])));
        return;
      }
      settle();
      all.forEach((p) => p.reject(failure(err)));
    }
  }

  /** What each committed job stored, to onStored; never fails the write (the requests are answered already). */
  private report(all: Pending[], stored: StoredByKind[]): void {
    if (!this.opts.onStored) return;
    try {
      all.forEach((p, i) => this.opts.onStored!(p.job, stored[i]));
    } catch {
      // Metrics only: a failing observer must not turn a committed write into a failure.
    }
  }
}
