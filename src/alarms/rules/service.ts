import type { Database } from '../../db/index.js';
import type { Logger } from '../../logger.js';
import type { Job } from '../../telemetry/jobs.js';
import { CommLossMonitor } from './comm-loss.js';
import { RuleEvaluator } from './evaluator.js';

// The alarms the service raises itself, on every instance: the limit-rule evaluator (after each
// commit of this instance, and by poll for the others' and for delays the clock ends) and the
// communication-loss check.

export interface AlarmRulesOptions {
  log: Logger;
  /** Alarms were raised or resolved (the live stream looks for their events). */
  onChange: () => void;
  evaluatorPollMs?: number;
  commLossIntervalMs?: number;
}

export class AlarmRulesService {
  readonly evaluator: RuleEvaluator;
  private readonly commLoss: CommLossMonitor;

  private readonly log: Logger;

  constructor(db: Database, opts: AlarmRulesOptions) {
    this.log = opts.log;
    this.evaluator = new RuleEvaluator(db, {
      log: opts.log,
      onChange: opts.onChange,
      pollMs: opts.evaluatorPollMs,
    });
    this.commLoss = new CommLossMonitor(db, opts.log, {
      intervalMs: opts.commLossIntervalMs,
      onChange: opts.onChange,
    });
  }

  /** When the instance starts serving: silence before now is not communication loss. */
  async start(): Promise<void> {
    // A database that does not answer now does not stop the start: the check notes it before its first run.
    await this.commLoss
      .noteStart()
      .catch((err: unknown) =>
        this.log.warn({ err }, 'could not note the service start; the communication check will'),
      );
    this.evaluator.start();
    this.commLoss.start();
  }

  /**
   * Uploads this instance committed, before their kick, and the transaction that stored them (their
   * entries: the samples of that transaction's events).
   */
  stored(jobs: Job[], xid: string | undefined): void {
    this.evaluator.stored(jobs, xid);
  }

  /** Something was committed: evaluate the rules soon. */
  committed(): void {
    this.evaluator.kick();
  }

  async close(): Promise<void> {
    await Promise.all([this.evaluator.close(), this.commLoss.stop()]);
  }
}
