// Background work that comes back: a task run after a first delay, then each interval after the
// previous run ended. Never two runs at once (against a database that answers slowly, runs would
// pile up and take the pool's connections), and its timers never keep the process alive.

export interface PeriodicOptions {
  /** From the end of one run to the start of the next. */
  intervalMs: number;
  /** Before the first run (default intervalMs). */
  firstDelayMs?: number;
  /** A run that failed; the next one still comes. */
  onError: (err: unknown) => void;
}

export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();

  /** `task` is told through `signal` when the task is stopped (a long run may end early). */
  constructor(
    private readonly task: (signal: AbortSignal) => unknown,
    private readonly opts: PeriodicOptions,
  ) {}

  start(): this {
    this.schedule(this.opts.firstDelayMs ?? this.opts.intervalMs);
    return this;
  }

  /** Stops the timer and signals a run under way; waits for that run at most 2 s. */
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
          await this.task(this.abort.signal);
        } catch (err) {
          this.opts.onError(err);
        }
      })();
      void this.running.then(() => this.schedule(this.opts.intervalMs));
    }, ms);
    this.timer.unref();
  }
}
