// The notification pieces of the alarm statements (contract 16), CTEs over `changed` for
// withAlarmEvents, so that what a change owes to notifications is recorded in the very statement
// (and commit) that makes the change, beside its journal entry:
// - a raised alarm gets, per policy covering its site, its step 0 in the outbox when that is due
//   at once, and a schedule row for the step still to come (the scheduler compares the severity
//   at each step);
// - a resolved alarm gets one `resolved` notification per channel that was notified of it (or has
//   a notification of it still to deliver), and its steps still to come are dropped.

/** Higher is more severe (src/alarms/record.ts SEVERITIES, reversed). */
const rank = (severity: string) =>
  `array_position(ARRAY['info', 'warning', 'minor', 'major', 'critical'], ${severity})`;

/**
 * For a statement whose `changed` rows carry `created` (the upsert of sends and rules): per policy
 * covering the new alarm's site, a step 0 due at once (AfterMinutes 0) goes straight to the outbox
 * when the severity is high enough, and the schedule row holds the step after it (or the first
 * repeat; none when there is neither); otherwise the schedule row holds step 0, due AfterMinutes on.
 */
export const scheduleRaised = (where: string) => `notify_policies AS (
  SELECT changed."SiteAlarmLogID"::int8 AS alarm_id, changed."SiteID" AS site_id, p.policy_id, p.steps,
         jsonb_array_length(p.steps) AS n, p.repeat_minutes,
         (p.steps->0->>'after')::int = 0 AS at_once,
         ${rank('changed."Severity"')} >= ${rank('p.min_severity')} AS severe
    FROM changed JOIN notification_policies p ON p.site_ids IS NULL OR changed."SiteID" = ANY(p.site_ids)
   WHERE ${where}),
notify_schedule AS (
  INSERT INTO notification_schedule (alarm_id, policy_id, next_step, due_at)
  SELECT alarm_id, policy_id, CASE WHEN at_once THEN 1 ELSE 0 END,
         CASE WHEN NOT at_once THEN now() + make_interval(mins => (steps->0->>'after')::int)
              WHEN n > 1 THEN now() + make_interval(mins => (steps->1->>'after')::int)
              ELSE now() + make_interval(mins => repeat_minutes) END
    FROM notify_policies WHERE NOT (at_once AND n = 1 AND repeat_minutes = 0)
   ORDER BY 1, 2),
notify_raised AS (
  INSERT INTO notification_outbox (alarm_id, site_id, channel_id, event, step)
  SELECT DISTINCT ON (np.alarm_id, np.policy_id, c.channel_id) np.alarm_id, np.site_id, c.channel_id, 'raised', 0
    FROM notify_policies np CROSS JOIN LATERAL jsonb_array_elements_text(np.steps->0->'channels') AS c(channel_id)
   WHERE np.at_once AND np.severe
     AND EXISTS (SELECT 1 FROM notification_channels ch WHERE ch.channel_id = c.channel_id))`;

export const NOTIFY_RESOLVED = `notify_resolved AS (
  INSERT INTO notification_outbox (alarm_id, site_id, channel_id, event)
  SELECT DISTINCT n.alarm_id, n.site_id, n.channel_id, 'resolved' FROM (
    SELECT j.alarm_id, j.site_id, j.channel AS channel_id
      FROM changed JOIN alarm_journal j ON j.alarm_id = changed."SiteAlarmLogID"::int8
     WHERE j.event = 'notified'
    UNION
    SELECT o.alarm_id, o.site_id, o.channel_id
      FROM changed JOIN notification_outbox o ON o.alarm_id = changed."SiteAlarmLogID"::int8
     WHERE o.event <> 'resolved'
  ) n WHERE n.channel_id IS NOT NULL),
notify_unschedule AS (
  DELETE FROM notification_schedule s USING changed WHERE s.alarm_id = changed."SiteAlarmLogID"::int8)`;
