-- Notifications (contract 16): channels and policies from the provisioning document, the steps
-- still to come of each alarm a policy covers, and the outbox of notifications to deliver.
--
-- * notification_channels: a webhook (url, its signing secret) or an email channel (recipients).
--   The secret is read only to sign a delivery; it is never returned or logged.
-- * notification_policies: site_ids null covers every site; steps is [{ "after": minutes,
--   "channels": [ids] }] in ascending order.
-- * notification_schedule: per alarm and policy, the next step and when it falls due. Written by
--   the statement that raises the alarm (src/alarms/store.ts), advanced by the step scheduler
--   (src/alarms/notify/schedule.ts), removed once the alarm is acknowledged or resolved.
-- * notification_outbox: one row per notification to deliver, written in the same transaction as
--   its cause (the scheduler's step, or the resolve statement). delivery_id stays the same across
--   retries; next_attempt_at is also the lease of the instance sending it. A row is deleted when it
--   is delivered or finally fails, and a journal entry is written in the same statement.

CREATE TABLE notification_channels (
  channel_id text PRIMARY KEY,
  type text NOT NULL CHECK (type IN ('webhook', 'email')),
  url text,
  secret text,
  recipients text[] NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE notification_policies (
  policy_id text PRIMARY KEY,
  site_ids integer[],
  min_severity text NOT NULL CHECK (min_severity IN ('critical', 'major', 'minor', 'warning', 'info')),
  steps jsonb NOT NULL,
  repeat_minutes integer NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE notification_schedule (
  alarm_id bigint NOT NULL REFERENCES site_alarms (alarm_id),
  policy_id text NOT NULL,
  next_step integer NOT NULL,
  due_at timestamptz NOT NULL,
  PRIMARY KEY (alarm_id, policy_id)
);
CREATE INDEX notification_schedule_due_idx ON notification_schedule (due_at);

CREATE TABLE notification_outbox (
  delivery_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  alarm_id bigint NOT NULL REFERENCES site_alarms (alarm_id),
  site_id integer NOT NULL,
  channel_id text NOT NULL,
  event text NOT NULL CHECK (event IN ('raised', 'escalated', 'repeated', 'resolved')),
  step integer,
  created_at timestamptz NOT NULL DEFAULT now(),
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  attempts integer NOT NULL DEFAULT 0
);
CREATE INDEX notification_outbox_due_idx ON notification_outbox (next_attempt_at);
CREATE INDEX notification_outbox_alarm_idx ON notification_outbox (alarm_id);
