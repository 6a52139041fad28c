import type { Database } from '../../db/index.js';
import { QueueVacuum } from '../../db/vacuum.js';
import { refreshMarked } from './refresh.js';
import { UNIT_LIST } from './units.js';
import type { SetAside } from './set-aside.js';

// The background refresher: takes the marks uploads leave (refresh.ts) in batches, and yields the
// machine to uploads that wait to be written.

export interface RefresherOptions {
  intervalMs: number;
  batch: number;
  onError: (err: unknown) => void;
  /** A mark whose bucket could not be rolled up was set aside (refresh.ts); retried later. */
  onSetAside?: (mark: SetAside, err: unknown) => void;
  /** Whether uploads are waiting to be written right now (TelemetryWriter.busy): the refresher then yields. */
  busy?: () => boolean;
  /** Marks taken after which the refresher vacuums rollup_dirty (default VACUUM_AFTER_ROWS; see db/vacuum.ts). */
  vacuumAfter?: number;
  /**
   * How long a burst of uploads has the machine to itself before the refresher takes its share
   * (default BUSY_GRACE_MS; the service's ROLLUP_BUSY_GRACE_MS).
   */
  busyGraceMs?: number;
}

/**
 * The share of the time the refresher works while uploads wait to be written. Every mark it takes is
 * work the uploads wait behind (the same cores, the same disk): once a burst of uploads has lasted
 * its grace (BUSY_GRACE_MS) it works this share of the time, so ingest keeps most of the machine, and
 * it still never stops, so a backlog left by a long burst stays bounded; it catches up at full speed
 * once the burst is over. Summaries are exact meanwhile: a stale quarter is read from the logs.
 */
export const BUSY_SHARE = 0.2;

/**
 * How long uploads that keep waiting for a write slot have the machine to themselves: the refresher
 * runs no cycle during the first BUSY_GRACE_MS of such a burst, then works its BUSY_SHARE of the time.
 * A burst shorter than this is written at full speed and its quarters are rolled up after it; in a
 * longer one the rollups fall at most this far further behind than with the share alone. Summaries
 * are exact meanwhile.
 */
export const BUSY_GRACE_MS = 30_000;

/**
 * Whether the refresher skips its cycle now: uploads are waiting (`busy`) and have been since
 * `busySince` (epoch ms; the time they began waiting) for less than `graceMs`.
 */
export function deferred(
  busy: boolean,
  busySince: number | undefined,
  now: number,
  graceMs: number,
): boolean {
  return busy && busySince !== undefined && now - busySince < graceMs;
}

/**
 * How long the refresher waits after a cycle that took `took` ms: none after a full batch (more is
 * waiting), the interval otherwise; while uploads wait (`busy`), long enough that its work is at
 * most BUSY_SHARE of the time.
 */
export function pauseAfter(full: boolean, took: number, intervalMs: number, busy: boolean): number {
  const idle = full ? 0 : intervalMs;
  if (!busy) return idle;
  return Math.max(idle, Math.ceil((took * (1 - BUSY_SHARE)) / BUSY_SHARE));
}

/**
 * Background refresh: every interval, and at once again while a batch came back full, unless uploads
 * are waiting (BUSY_GRACE_MS, then BUSY_SHARE); quarters are rolled up once they have ended (see
 * refreshMarked). Stale buckets are read from the logs meanwhile, so the refresher only decides how
 * fast summaries are, never whether they are right.
 */
export class RollupRefresher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Epoch ms since which uploads have kept waiting (undefined while they do not). */
  private busySince: number | undefined;
  /**
   * The marks it deletes leave dead rows, which nothing else clears where autovacuum does not run
   * (db/vacuum.ts).
   */
  private readonly vacuum: QueueVacuum;

  constructor(
    private readonly db: Database,
    private readonly opts: RefresherOptions,
  ) {
    this.vacuum = new QueueVacuum(db, 'rollup_dirty', opts.vacuumAfter);
  }

  start(): void {
    this.schedule(this.opts.intervalMs);
  }

  /** Waits for a refresh under way, but not for a database that does not answer (it only delays rollups). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.running,
      new Promise((resolve) => (timer = setTimeout(resolve, 2000))),
    ]);
    clearTimeout(timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      if (this.inGrace()) return this.schedule(this.opts.intervalMs);
      const started = Date.now();
      this.running = this.cycle().then((full) => this.schedule(this.pause(full, started)));
    }, ms);
    this.timer.unref();
  }

  /** Whether a burst of uploads is still within its grace; notes when a burst begins and ends. */
  private inGrace(): boolean {
    const busy = this.opts.busy?.() ?? false;
    const now = Date.now();
    if (!busy) this.busySince = undefined;
    else this.busySince ??= now;
    return deferred(busy, this.busySince, now, this.opts.busyGraceMs ?? BUSY_GRACE_MS);
  }

  private pause(full: boolean, started: number): number {
    return pauseAfter(
      full,
      Date.now() - started,
      this.opts.intervalMs,
      this.opts.busy?.() ?? false,
    );
  }

  /** true when some kind had a full batch (more is waiting). */
  private async cycle(): Promise<boolean> {
    let full = false;
    let taken = 0;
    try {
      for (const spec of UNIT_LIST) {
        if (this.stopped) break;
        const batch = await refreshMarked(
          this.db,
          spec,
          this.opts.batch,
          true,
          {},
          { onSetAside: this.opts.onSetAside, stopped: () => this.stopped },
        );
        taken += batch;
        if (batch === this.opts.batch) full = true;
      }
      if (!this.stopped) await this.vacuum.note(taken);
    } catch (err) {
      this.opts.onError(err);
    }
    return full;
  }
}
