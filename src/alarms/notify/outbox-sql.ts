// The notification pieces of the alarm statements (contract 16), CTEs over `changed` for
// withAlarmEvents, so that what a change owes to notifications is recorded in the very statement
// (and commit) that makes the change, beside its journal entry:
// - a raised alarm gets one schedule row per policy covering its site, its first step due
//   AfterMinutes after the raise (the scheduler compares the severity at each step);
// - a resolved alarm gets one `resolved` notification per channel that was notified of it (or has
//   a notification of it still to deliver), and its steps still to come are dropped.

/** For a statement whose `changed` rows carry `created` (the upsert of sends and rules). */
export const scheduleRaised = (where: string) => `notify_schedule AS (
  INSERT INTO notification_schedule (alarm_id, policy_id, next_step, due_at)
  SELECT changed."SiteAlarmLogID"::int8, p.policy_id, 0, now() + make_interval(mins => (p.steps->0->>'after')::int)
    FROM changed JOIN notification_policies p ON p.site_ids IS NULL OR changed."SiteID" = ANY(p.site_ids)
   WHERE ${where}
   ORDER BY 1, 2)`;

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
