import type { BlockList } from 'node:net';
import type { Queryable } from '../../db/index.js';
import { RECORD_COLUMNS, toRecord, type AlarmRecord, type RecordRow } from '../record.js';
import type { Mailer } from './email.js';
import type { Attempt, ChannelType, NotificationEvent } from './types.js';
import { postWebhook } from './webhook.js';

// Delivering the outbox (contract 16), at least once, by one instance at a time. An instance
// claims due rows (FOR UPDATE SKIP LOCKED, so two instances never take the same row) by moving
// their next attempt a lease ahead, sends them, then settles each in one statement: delivered or
// finally failed deletes the row and writes the journal entry; otherwise the next attempt comes
// after a jittered exponential backoff (1 s doubling, at most 10 min), for 24 h from the record.
// A crash after the claim leaves the row to be taken again when its lease ends; after the send
// but before the settle, the same delivery goes again with the same deliveryId.

export const LEASE_SECONDS = 60;
export const RETRY_HOURS = 24;
const BATCH = 20;

export interface Claimed {
  delivery_id: string;
  alarm_id: string;
  site_id: number;
  channel_id: string;
  event: NotificationEvent;
  step: number | null;
  attempts: number;
  created_at: Date;
  now: Date;
}

export async function claimDue(db: Queryable, limit = BATCH): Promise<Claimed[]> {
  return db.query<Claimed>(
    `UPDATE notification_outbox o SET next_attempt_at = now() + make_interval(secs => $2), attempts = attempts + 1
      WHERE delivery_id IN (SELECT delivery_id FROM notification_outbox WHERE next_attempt_at <= now()
                             ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING delivery_id::text, alarm_id::text, site_id, channel_id, event, step, attempts, created_at, now() AS now`,
    [limit, LEASE_SECONDS],
  );
}

/** The wait before attempt n+1 after n failed ones: 1 s doubling, at most 10 min, jittered (half to all of it). */
export const backoffMs = (attempts: number, random = Math.random) =>
  Math.min(600_000, 1000 * 2 ** Math.min(attempts - 1, 20)) * (0.5 + random() / 2);

/** Records the outcome of an attempt; returns what it became (a retry past 24 h is a failure). */
export async function settle(
  db: Queryable,
  c: Claimed,
  attempt: Attempt,
): Promise<'delivered' | 'retried' | 'failed'> {
  let outcome: 'delivered' | 'retried' | 'failed' =
    attempt.result === 'delivered'
      ? 'delivered'
      : attempt.result === 'retry'
        ? 'retried'
        : 'failed';
  const wait = backoffMs(c.attempts);
  if (
    outcome === 'retried' &&
    c.now.getTime() + wait > c.created_at.getTime() + RETRY_HOURS * 3600_000
  )
    outcome = 'failed';
  if (outcome === 'retried') {
    await db.query(
      `UPDATE notification_outbox SET next_attempt_at = now() + make_interval(secs => $2) WHERE delivery_id = $1`,
      [c.delivery_id, wait / 1000],
    );
    return outcome;
  }
  const note = attempt.result === 'delivered' ? null : attempt.reason.slice(0, 1000);
  // The row goes and its journal entry comes in one statement: a row already settled elsewhere
  // (its lease ended while this instance was still sending) gets no second entry.
  await db.query(
    `WITH d AS (DELETE FROM notification_outbox WHERE delivery_id = $1 RETURNING alarm_id, site_id, channel_id, step)
     INSERT INTO alarm_journal (alarm_id, site_id, event, note, channel, step)
     SELECT alarm_id, site_id, $2, $3, channel_id, step FROM d`,
    [c.delivery_id, outcome === 'delivered' ? 'notified' : 'notification_failed', note],
  );
  return outcome;
}

export interface Channel {
  channel_id: string;
  type: ChannelType;
  url: string | null;
  secret: string | null;
  recipients: string[];
}

export interface Context {
  channel: Channel;
  alarm: AlarmRecord;
  siteName: string;
}

export async function loadContext(db: Queryable, c: Claimed): Promise<Context | null> {
  const [row] = await db.query<RecordRow & { site_name: string; channel: Channel | null }>(
    `SELECT ${RECORD_COLUMNS}, (SELECT name FROM sites s WHERE s.site_id = a.site_id) AS site_name,
            (SELECT row_to_json(c) FROM (SELECT channel_id, type, url, secret, recipients FROM notification_channels
                                          WHERE channel_id = $2) c) AS channel
       FROM site_alarms a WHERE alarm_id = $1`,
    [c.alarm_id, c.channel_id],
  );
  if (!row?.channel) return null;
  return { channel: row.channel, alarm: toRecord(row), siteName: row.site_name };
}

export interface Senders {
  mailer: Mailer | null;
  allowed: BlockList;
  publicUrl: string | undefined;
}

/** One attempt at sending a claimed notification. */
export async function attempt(c: Claimed, ctx: Context | null, s: Senders): Promise<Attempt> {
  if (!ctx) return { result: 'failed', reason: 'the channel no longer exists' };
  const { channel, alarm, siteName } = ctx;
  if (channel.type === 'webhook') {
    if (!channel.url) return { result: 'failed', reason: 'the channel has no Url' };
    const body = JSON.stringify({
      deliveryId: c.delivery_id,
      event: c.event,
      step: c.step,
      alarm,
      site: { SiteID: c.site_id, Name: siteName },
    });
    return postWebhook(channel.url, channel.secret, c.delivery_id, body, s.allowed);
  }
  if (!s.mailer) return { result: 'failed', reason: 'SMTP_URL is not set' };
  const link = s.publicUrl ? `${s.publicUrl.replace(/\/$/, '')}/console/sites/${c.site_id}` : null;
  return s.mailer.send({
    to: channel.recipients,
    subject: `[${alarm.Severity.toUpperCase()}] ${siteName}: ${alarm.Message ?? alarm.AlarmType}`,
    text: [
      `${c.event === 'resolved' ? 'Resolved' : 'Alarm'} (${c.event}${c.step === null ? '' : `, step ${c.step}`})`,
      `Site: ${siteName} (${c.site_id})`,
      `Alarm ${alarm.SiteAlarmLogID}: ${alarm.AlarmType}, ${alarm.Severity}`,
      `Message: ${alarm.Message ?? ''}`,
      `Value: ${alarm.Value ?? ''}`,
      `Raised at: ${alarm.RaisedAt}`,
      `Delivery: ${c.delivery_id}`,
      ...(link ? [`Console: ${link}`] : []),
    ].join('\n'),
  });
}

/** Notifications still to deliver (the pending gauge), counted up to `cap`. */
export async function pendingCount(db: Queryable, cap = 100_000): Promise<number> {
  const [r] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM notification_outbox LIMIT $1) o`,
    [cap],
  );
  return r.n;
}
