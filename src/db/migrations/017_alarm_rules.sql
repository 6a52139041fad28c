-- Limit rules and communication loss: alarms the service raises itself (src/alarms/rules/).
--
-- * alarm_rules: one row per rule of the provisioning document, its definition and, in the same
--   row, its evaluation state (the newest sample evaluated, whether its condition holds and since
--   when, whether it has raised its alarm). The state changes only in the evaluator's transaction,
--   together with the alarms it raises or resolves and its position in stream_events, so a crash
--   or a second instance can neither raise an alarm twice nor skip a stored sample.
-- * alarm_rule_cursor: that position (a stream cursor, src/stream/cursor.ts, encoded). Its row lock
--   makes one evaluator run at a time across instances.
-- * sites.comm_loss_minutes: null is the default (60); 0 turns communication loss off.
-- * service_starts: when an instance last started serving; silence counts from the later of that
--   and a site's last communication, so an outage of the service raises nothing by itself.
-- * site_comm_loss: per site, the silence (its last communication) already alarmed, so that one
--   silence raises one alarm, however many instances look and even after a resolve by hand.
-- * site_alarms.source: who raised an alarm (edge, rule, communication); a rule or the
--   communication check resolves only alarms of its own source.

ALTER TABLE site_alarms ADD COLUMN IF NOT EXISTS source text NOT NULL DEFAULT 'edge';

CREATE TABLE alarm_rules (
  rule_id integer PRIMARY KEY CHECK (rule_id > 0),
  site_id integer NOT NULL REFERENCES sites(site_id),
  kind text NOT NULL CHECK (kind IN ('sensor', 'meter', 'pump', 'tank')),
  equipment_id integer NOT NULL,
  field text NOT NULL,
  condition text NOT NULL CHECK (condition IN ('above', 'below')),
  limit_value double precision NOT NULL,
  deadband double precision NOT NULL DEFAULT 0 CHECK (deadband >= 0),
  delay_seconds integer NOT NULL DEFAULT 0 CHECK (delay_seconds BETWEEN 0 AND 86400),
  alarm_type text NOT NULL,
  severity text NOT NULL CHECK (severity IN ('critical', 'major', 'minor', 'warning', 'info')),
  message text,
  enabled boolean NOT NULL DEFAULT true,
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_ts timestamptz,
  last_value double precision,
  active boolean NOT NULL DEFAULT false,
  active_since timestamptz,
  raised boolean NOT NULL DEFAULT false,
  alarm_id bigint,
  CHECK (active OR (active_since IS NULL AND NOT raised))
);
-- The rules of the equipment a batch of events touched; a site's rules for GET /v1/alarms/rules.
CREATE INDEX alarm_rules_equipment_idx ON alarm_rules (kind, equipment_id);
CREATE INDEX alarm_rules_site_idx ON alarm_rules (site_id, rule_id);
-- Rules waiting for their delay to end by the clock.
CREATE INDEX alarm_rules_pending_idx ON alarm_rules (active_since) WHERE active AND NOT raised AND enabled;

CREATE TABLE alarm_rule_cursor (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  position text
);
INSERT INTO alarm_rule_cursor DEFAULT VALUES;

ALTER TABLE sites ADD COLUMN comm_loss_minutes integer CHECK (comm_loss_minutes BETWEEN 0 AND 10080);

CREATE TABLE service_starts (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  started_at timestamptz NOT NULL
);

CREATE TABLE site_comm_loss (
  site_id integer PRIMARY KEY REFERENCES sites(site_id),
  silent_since timestamptz NOT NULL,
  alarm_id bigint NOT NULL
);
