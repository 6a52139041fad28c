import type { RetentionReport } from './pass.js';

// Retention in the service: a pass soon after start, then every interval (an hour), on every instance;
// the pass's own lock lets one of them work at a time, and the others find nothing left to do.

export interface RetentionSchedulerOptions {
  intervalMs: number;
  /** Before the first pass (the start of a service is busy enough). */
  firstDelayMs: number;
  onReport: (report: RetentionReport) => void;
  onError: (err: unknown) => void;
}

export class RetentionScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly pass: (signal: AbortSignal) => Promise<RetentionReport>,
    private readonly opts: RetentionSchedulerOptions,
  ) {}

  start(): void {
    this.schedule(this.opts.firstDelayMs);
  }

  /** Stops the timer and a pass under way between two of its steps; waits for that step at most 2 s. */
  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((r) => (timer = setTimeout(r, 2000)))]);
    clearTimeout(timer);
  }

  private schedule(ms: number): void {
    if (this.abort.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.running = (async () => {
        try {
          this.opts.onReport(await this.pass(this.abort.signal));
        } catch (err) {
          this.opts.onError(err);
        }
      })();
      void this.running.then(() => this.schedule(this.opts.intervalMs));
    }, ms);
    this.timer.unref();
  }
}
