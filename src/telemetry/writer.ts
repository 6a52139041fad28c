import type { Database } from '../db/index.js';
import { serverError } from '../errors.js';
import { keysOf, type Counts, type Job } from './jobs.js';
import type { Partitions } from './partitions.js';
import { buildStatement, type LogMode } from './statement.js';

// Group commit. Requests that arrive while earlier writes are in flight wait in a queue; when a
// write ends, everything queued goes to the database together, in one statement (one round trip,
// one commit) or, when two requests share a key, one transaction of a statement per round. Each
// request is answered only after that commit, with its own counts. Jobs are validated and checked
// before they are queued, so they cannot fail one another; should a group fail for a reason other
// than the database being unreachable, each job is tried alone so that only the bad one fails.
// At low load nothing waits beyond one turn of the event loop: a request is written as soon as a
// write slot is free. Logs are first written with a plain INSERT (new data is the rule, and it is
// about twice as fast); a stored key makes it fail as a whole, and the same jobs are then upserted.

export interface WriterOptions {
  /** false: every request is its own statement (to measure what grouping gains). */
  group: boolean;
  /** Writes in flight at once (PGlite runs one statement at a time: 1). */
  maxInFlight: number;
  /** A write that takes longer is answered 500 (the database is stuck or unreachable). */
  timeoutMs: number;
  /** Called after each commit (the live stream looks for the events the write stored). */
  onCommit?: () => void;
}

interface Pending {
  job: Job;
  resolve: (c: Counts) => void;
  reject: (e: unknown) => void;
}

/** A group fills up to about one batch: grouping pays for small requests; big batches gain nothing by waiting for each other. */
const MAX_GROUP_ROWS = 1000;
const MAX_ROUNDS = 4;
/** After a plain INSERT met a stored key (replays), upsert straight away for this long. */
const UPSERT_AFTER_CONFLICT_MS = 2000;
const UNIQUE_VIOLATION = '23505';

const TRANSIENT = new Set(['40001', '40P01']); // serialization failure, deadlock: nothing was written
const isConnectionError = (err: any) =>
  /^(08|57P0)/.test(err?.code ?? '') || ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT'].includes(err?.code) ||
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(err?.message ?? '');

class WriteTimeout extends Error {}

export class TelemetryWriter {
  private readonly queue: Pending[] = [];
  private inFlight = 0;
  private lastConflict = 0;
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly db: Database,
    private readonly partitions: Partitions,
    private readonly opts: WriterOptions,
  ) {}

  /** Stores a job; resolves with its counts once committed, rejects with a 500 when it could not be stored. */
  submit(job: Job): Promise<Counts> {
    if (!job.entries.length) return Promise.resolve({ received: job.received, stored: 0, duplicates: job.received });
    return new Promise((resolve, reject) => {
      this.queue.push({ job, resolve, reject });
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

  /** Resolves once nothing is queued or being written (at shutdown: before the database closes). */
  idle(): Promise<void> {
    if (!this.queue.length && !this.inFlight) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.queue.length && (!this.opts.group || this.inFlight < this.opts.maxInFlight)) {
      const group = this.opts.group ? this.take() : [[this.queue.shift()!]];
      this.inFlight++;
      void this.run(group).finally(() => {
        this.inFlight--;
        this.pump();
        if (!this.queue.length && !this.inFlight) this.idleWaiters.splice(0).forEach((wake) => wake());
      });
    }
  }

  /** The queued jobs that go together: up to a size, and up to MAX_ROUNDS occurrences of one key. */
  private take(): Pending[][] {
    const rounds: Pending[][] = [];
    const roundOf = new Map<string, number>();
    let rows = 0;
    while (this.queue.length) {
      const next = this.queue[0];
      if (rounds.length && rows + next.job.entries.length > MAX_GROUP_ROWS) break;
      if (!rounds.length && next.job.entries.length >= MAX_GROUP_ROWS) return [[this.queue.shift()!]];
      let r = 0;
      // A job that goes alone needs no key comparison.
      const keys = this.queue.length > 1 || rounds.length ? keysOf(next.job) : [];
      for (const key of keys) {
        const seen = roundOf.get(key);
        if (seen !== undefined && seen >= r) r = seen + 1;
      }
      if (r >= MAX_ROUNDS) break;
      for (const key of keys) roundOf.set(key, r);
      (rounds[r] ??= []).push(this.queue.shift()!);
      rows += next.job.entries.length;
    }
    return rounds;
  }

  private async run(rounds: Pending[][]): Promise<void> {
    const all = rounds.flat();
    try {
      const counts = await this.write(rounds);
      this.opts.onCommit?.();
      all.forEach((p, i) => p.resolve(counts[i]));
    } catch (err) {
      if (all.length > 1 && !(err instanceof WriteTimeout) && !isConnectionError(err)) {
        // Something in one job that validation did not catch: find it by writing each alone.
        await Promise.all(all.map((p) => this.run([[p]])));
        return;
      }
      const failure = serverError('the database could not store the upload; nothing of it is acknowledged, send it again');
      (failure as any).cause = err;
      all.forEach((p) => p.reject(failure));
    }
  }

  /** Counts per job, in the order of rounds.flat(). Retries what certainly or harmlessly failed. */
  private write(rounds: Pending[][]): Promise<Counts[]> {
    const started = Date.now();
    const jobs = rounds.map((r) => r.map((p) => p.job));
    const attempt = async () => {
      await this.partitions.cover(Math.max(...jobs.flat().map((j) => (j.role === 'log' ? j.maxTs : 0))));
      const sites = [...new Set(jobs.flat().flatMap((j) => j.sites))].sort((a, b) => a - b);
      // New data is the rule: try the plain INSERT first, and upsert when a key was already there.
      // (A group of several rounds writes one key twice: its second round could never be a plain INSERT.)
      let mode: LogMode = jobs.length === 1 && Date.now() - this.lastConflict > UPSERT_AFTER_CONFLICT_MS ? 'insert' : 'upsert';
      for (let n = 0; ; n++) {
        try {
          const stored = await this.execute(jobs, sites, mode);
          return jobs.flat().map((job, i) => ({ received: job.received, stored: stored[i], duplicates: job.received - stored[i] }));
        } catch (err) {
          if (mode === 'insert' && (err as any)?.code === UNIQUE_VIOLATION) {
            this.lastConflict = Date.now();
            mode = 'upsert';
            n--;
            continue;
          }
          // Every write is idempotent (keyed upserts), so repeating one whose outcome is unknown cannot
          // store anything twice; at worst a repeat counts as duplicates what the first attempt stored.
          const retry = TRANSIENT.has((err as any)?.code) || isConnectionError(err);
          if (!retry || n >= 2 || Date.now() - started > this.opts.timeoutMs / 2) throw err;
          await new Promise((r) => setTimeout(r, 50 * (n + 1)));
        }
      }
    };
    return this.withTimeout(attempt(), this.opts.timeoutMs);
  }

  /** Rows stored per job, in the order of jobs.flat(). */
  private async execute(rounds: Job[][], sites: number[], mode: LogMode): Promise<number[]> {
    const results: number[][] = [];
    const run = async (q: { query: Database['query'] }) => {
      for (let r = 0; r < rounds.length; r++) {
        const { sql, params } = buildStatement(rounds[r], r === 0 ? sites : undefined, mode);
        const stored = rounds[r].map((job) => (mode === 'insert' && job.role === 'log' ? job.entries.length : 0));
        for (const row of await q.query<{ job: number; n: number }>(sql, params)) stored[row.job] = row.n;
        results.push(stored);
      }
    };
    if (rounds.length === 1) await run(this.db);
    else await this.db.transaction(run);
    return results.flat();
  }

  private withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WriteTimeout(`write took longer than ${this.opts.timeoutMs} ms`)), ms);
    });
    work.catch(() => {}); // a write that lost the race must not become an unhandled rejection
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }
}
