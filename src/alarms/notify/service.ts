import type { Database } from '../../db/index.js';
import type { Logger } from '../../logger.js';
import { PeriodicTask } from '../../periodic-task.js';
import { allowList } from './address.js';
import { attempt, claimDue, loadContext, settle, type Senders } from './deliver.js';
import { Mailer } from './email.js';
import { runDueSteps } from './schedule.js';
import type { ChannelType } from './types.js';

// Notifications (contract 16, docs/alarms.md#notifications): on every instance, every pollMs, the
// steps that fell due go to the outbox, then the outbox's due rows are sent. The database decides
// who does what (SKIP LOCKED), so any number of instances may run this.

export interface NotifySettings {
  SMTP_URL?: string;
  SMTP_FROM: string;
  PUBLIC_URL?: string;
  NOTIFY_ALLOW_PRIVATE?: string;
  NOTIFY_POLL_MS: number;
}

export interface NotifyOptions {
  log: Logger;
  /** One delivery attempt's outcome, for the metrics. */
  onResult?: (channel: ChannelType, result: 'delivered' | 'retried' | 'failed') => void;
}

export class NotificationService {
  private readonly task: PeriodicTask;
  private readonly senders: Senders;

  constructor(
    private readonly db: Database,
    settings: NotifySettings,
    private readonly opts: NotifyOptions,
  ) {
    this.senders = {
      mailer: settings.SMTP_URL ? new Mailer(settings.SMTP_URL, settings.SMTP_FROM) : null,
      allowed: allowList(settings.NOTIFY_ALLOW_PRIVATE),
      publicUrl: settings.PUBLIC_URL,
    };
    this.task = new PeriodicTask((signal) => this.run(signal), {
      intervalMs: settings.NOTIFY_POLL_MS,
      onError: (err) => opts.log.warn({ err }, 'notifications: a run failed; the next one retries'),
    });
  }

  start(): void {
    this.task.start();
  }

  async close(): Promise<void> {
    await this.task.stop();
    this.senders.mailer?.close();
  }

  /** One pass: due steps into the outbox, then due deliveries, until none is left or stopped. */
  async run(signal?: AbortSignal): Promise<void> {
    while (!signal?.aborted && (await runDueSteps(this.db)) > 0);
    while (!signal?.aborted) {
      const claimed = await claimDue(this.db);
      if (!claimed.length) return;
      await Promise.all(
        claimed.map(async (c) => {
          const ctx = await loadContext(this.db, c);
          const result = await attempt(c, ctx, this.senders);
          const outcome = await settle(this.db, c, result);
          if (ctx) this.opts.onResult?.(ctx.channel.type, outcome);
          if (outcome !== 'delivered')
            this.opts.log.warn(
              {
                deliveryId: c.delivery_id,
                channel: c.channel_id,
                alarm: c.alarm_id,
                attempt: c.attempts,
                reason: result.result === 'delivered' ? undefined : result.reason,
              },
              outcome === 'retried'
                ? 'notification not delivered; retrying'
                : 'notification failed',
            );
        }),
      );
    }
  }
}
