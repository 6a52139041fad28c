import type { Database } from '../../db/index.js';
import { SEVERITIES } from '../record.js';
import type { NotificationEvent } from './types.js';

// The step scheduler (contract 16). Each alarm a policy covers has one schedule row: its next step
// and when that falls due. Every instance looks for due rows, taken with FOR UPDATE SKIP LOCKED, so
// one instance handles a row; in the same transaction it records the step's notifications in the
// outbox and moves the row on (next step, a repeat, or nothing more). An alarm resolved or
// acknowledged has no more steps; a shelved one waits for the end of its shelf, and then only the
// latest step that fell due meanwhile is sent, at once. The severity is compared with the policy's
// MinSeverity at each step, as the alarm stands then.

const BATCH = 200;

interface DueRow {
  alarm_id: string;
  policy_id: string;
  next_step: number;
  site_id: number;
  severity: string;
  raised_at: Date;
  resolved: boolean;
  acknowledged: boolean;
  shelved_until: Date | null;
  steps: { after: number; channels: string[] }[] | null;
  repeat_minutes: number | null;
  min_severity: string | null;
  now: Date;
}

/** Higher is more severe. */
const rank = (s: string) => SEVERITIES.length - SEVERITIES.indexOf(s as never);

interface Decision {
  /** The step to send now (and its event), or none. */
  send?: { step: number; event: NotificationEvent; channels: string[] };
  /** The row's next step and due time, or null to remove it. */
  next: { step: number; due: Date } | null;
}

/** What to do with a due row; pure, so that tests can check the rules directly. */
export function decide(r: DueRow): Decision {
  const now = r.now.getTime();
  if (!r.steps?.length || r.resolved || r.acknowledged) return { next: null };
  // Shelved: look again when the shelf ends, or sooner (an unshelve by hand ends it early).
  if (r.shelved_until && r.shelved_until.getTime() > now)
    return {
      next: { step: r.next_step, due: new Date(Math.min(r.shelved_until.getTime(), now + 15_000)) },
    };
  const last = r.steps.length - 1;
  const raised = r.raised_at.getTime();
  let step: number;
  let event: NotificationEvent;
  if (r.next_step > last) {
    step = last;
    event = 'repeated';
  } else {
    // The latest step already due (several after a shelf, or after the service was down).
    step = r.next_step;
    while (step < last && raised + r.steps[step + 1].after * 60_000 <= now) step++;
    event = step === 0 ? 'raised' : 'escalated';
  }
  const send =
    rank(r.severity) >= rank(r.min_severity ?? 'info')
      ? { step, event, channels: r.steps[step].channels }
      : undefined;
  let next: Decision['next'];
  if (step < last)
    next = { step: step + 1, due: new Date(raised + r.steps[step + 1].after * 60_000) };
  else if (r.repeat_minutes)
    next = { step: last + 1, due: new Date(now + r.repeat_minutes * 60_000) };
  else next = null;
  return { send, next };
}

/** Handles at most BATCH due rows in one transaction; returns how many it took. */
export async function runDueSteps(db: Database): Promise<number> {
  return db.transaction(async (tx) => {
    const rows = await tx.query<DueRow>(
      `SELECT s.alarm_id::text AS alarm_id, s.policy_id, s.next_step, a.site_id, a.severity, a.raised_at,
              a.resolved_at IS NOT NULL AS resolved, a.acknowledged_at IS NOT NULL AS acknowledged,
              a.shelved_until, p.steps, p.repeat_minutes, p.min_severity, now() AS now
         FROM (SELECT * FROM notification_schedule WHERE due_at <= now()
                ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED) s
         JOIN site_alarms a ON a.alarm_id = s.alarm_id
         LEFT JOIN notification_policies p ON p.policy_id = s.policy_id`,
      [BATCH],
    );
    if (!rows.length) return 0;
    const out = { alarm: [] as string[], site: [] as number[], channel: [] as string[] };
    const ev = { event: [] as string[], step: [] as number[] };
    const moved = { alarm: [] as string[], policy: [] as string[], step: [] as (number | null)[] };
    const due: (string | null)[] = [];
    for (const r of rows) {
      const d = decide(r);
      for (const channel of new Set(d.send?.channels ?? [])) {
        out.alarm.push(r.alarm_id);
        out.site.push(r.site_id);
        out.channel.push(channel);
        ev.event.push(d.send!.event);
        ev.step.push(d.send!.step);
      }
      moved.alarm.push(r.alarm_id);
      moved.policy.push(r.policy_id);
      moved.step.push(d.next?.step ?? null);
      due.push(d.next ? d.next.due.toISOString() : null);
    }
    // Only channels that exist now are notified (a channel removed since is skipped).
    await tx.query(
      `INSERT INTO notification_outbox (alarm_id, site_id, channel_id, event, step)
       SELECT t.alarm_id, t.site_id, t.channel_id, t.event, t.step
         FROM unnest($1::int8[], $2::int[], $3::text[], $4::text[], $5::int[])
              WITH ORDINALITY AS t(alarm_id, site_id, channel_id, event, step, ord)
        WHERE EXISTS (SELECT 1 FROM notification_channels c WHERE c.channel_id = t.channel_id)
        ORDER BY t.ord`,
      [out.alarm, out.site, out.channel, ev.event, ev.step],
    );
    await tx.query(
      `WITH m AS (SELECT * FROM unnest($1::int8[], $2::text[], $3::int[], $4::timestamptz[]) AS m(alarm_id, policy_id, step, due)),
       gone AS (DELETE FROM notification_schedule s USING m
                 WHERE s.alarm_id = m.alarm_id AND s.policy_id = m.policy_id AND m.step IS NULL)
       UPDATE notification_schedule s SET next_step = m.step, due_at = m.due
         FROM m WHERE s.alarm_id = m.alarm_id AND s.policy_id = m.policy_id AND m.step IS NOT NULL`,
      [moved.alarm, moved.policy, moved.step, due],
    );
    return rows.length;
  });
}
