import { PeriodicTask, type PeriodicOptions } from '../../periodic-task.js';
import type { RetentionReport } from './pass.js';

// Retention in the service: a pass soon after start, then every interval (an hour), on every instance;
// the pass's own lock lets one of them work at a time, and the others find nothing left to do.

export interface RetentionSchedulerOptions extends PeriodicOptions {
  /** Before the first pass (the start of a service is busy enough). */
  firstDelayMs: number;
  onReport: (report: RetentionReport) => void;
}

/** stop() ends a pass under way between two of its steps. */
export class RetentionScheduler extends PeriodicTask {
  constructor(
    pass: (signal: AbortSignal) => Promise<RetentionReport>,
    opts: RetentionSchedulerOptions,
  ) {
    super(async (signal) => opts.onReport(await pass(signal)), opts);
  }
}
