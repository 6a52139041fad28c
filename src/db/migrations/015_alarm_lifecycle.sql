-- Alarm management (ISA-18.2): acknowledgement independent of resolution, shelving with an
-- expiry, where an alarm came from, and the journal of every change with who and why.
--
-- * source: who raised it (edge, rule or communication loss). raised_at: when the service raised
--   it (its arrival), whatever the edge's timestamp says; rows from before this migration take
--   their first_seen, the best time known.
-- * acknowledged_at/by: set once, by the first acknowledge; a resolved alarm may still be
--   acknowledged. Alarms resolved before acknowledgement existed count as acknowledged at their
--   resolve (resolving was the only way to say "seen"), so an upgrade does not turn every past
--   alarm into an unacknowledged one; the journal says so for each.
-- * shelved_until: set by a shelve, back to null by an unshelve or by the service when it passes
--   (src/alarms/expiry.ts); the partial index finds those due.
-- * alarm_journal: one row per change, written by the statement that makes the change. Duplicate
--   sends only bump occurrences and write none. channel and step are for notifications.

ALTER TABLE site_alarms
  ADD COLUMN source text NOT NULL DEFAULT 'edge',
  ADD COLUMN raised_at timestamptz,
  ADD COLUMN acknowledged_at timestamptz,
  ADD COLUMN acknowledged_by text,
  ADD COLUMN shelved_until timestamptz;

UPDATE site_alarms SET raised_at = first_seen,
  acknowledged_at = resolved_at, acknowledged_by = resolved_by;

ALTER TABLE site_alarms
  ALTER COLUMN raised_at SET NOT NULL,
  ALTER COLUMN raised_at SET DEFAULT now(),
  ADD CONSTRAINT site_alarms_source_check CHECK (source IN ('edge', 'rule', 'communication'));

-- The alarm list: a site's alarms by RaisedAt, newest first.
CREATE INDEX site_alarms_raised_idx ON site_alarms (site_id, raised_at DESC, alarm_id DESC);
CREATE INDEX site_alarms_shelved_idx ON site_alarms (shelved_until) WHERE shelved_until IS NOT NULL;

CREATE TABLE alarm_journal (
  event_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  alarm_id bigint NOT NULL REFERENCES site_alarms (alarm_id),
  site_id integer NOT NULL,
  time timestamptz NOT NULL DEFAULT now(),
  event text NOT NULL CHECK (event IN ('raised', 'acknowledged', 'shelved', 'unshelved', 'resolved', 'notified', 'notification_failed')),
  by text,
  note text,
  channel text,
  step integer
);
-- A site's journal over a range, oldest first; one alarm's journal.
CREATE INDEX alarm_journal_site_time_idx ON alarm_journal (site_id, time, event_id);
CREATE INDEX alarm_journal_alarm_idx ON alarm_journal (alarm_id, event_id);

INSERT INTO alarm_journal (alarm_id, site_id, time, event, by, note)
SELECT alarm_id, site_id, t, event, by, note FROM (
  SELECT alarm_id, site_id, raised_at AS t, 'raised' AS event, NULL::text AS by, NULL::text AS note, 1 AS n FROM site_alarms
  UNION ALL
  SELECT alarm_id, site_id, resolved_at, 'acknowledged', resolved_by, 'resolved before acknowledgement existed', 2
    FROM site_alarms WHERE resolved_at IS NOT NULL
  UNION ALL
  SELECT alarm_id, site_id, resolved_at, 'resolved', resolved_by, resolve_note, 3
    FROM site_alarms WHERE resolved_at IS NOT NULL
) j ORDER BY t, alarm_id, n;

-- Alarm performance's standing alarms: those resolved after a time, found by it.
CREATE INDEX site_alarms_resolved_idx ON site_alarms (site_id, resolved_at) WHERE resolved_at IS NOT NULL;
