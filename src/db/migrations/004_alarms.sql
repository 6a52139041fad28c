-- Alarm lifecycle (unresolved -> resolved) and deduplication, enforced by the database itself.
--
-- * One open alarm per key: the partial unique index below admits at most one unresolved row per
--   (site, equipment type, equipment id, alarm type). A site alarm has no equipment (both NULL);
--   COALESCE folds NULL to 0 so two open site alarms of one type collide too (ids start at 1).
--   NULLS NOT DISTINCT would say the same but needs PostgreSQL 15; this works on any version.
--   Sends use INSERT ... ON CONFLICT on exactly this index, so concurrent sends of one alarm on
--   several connections end in one row whose occurrences count every send.
-- * A resolved row leaves the index, so the next send of its key creates a new alarm.
-- * Resolution records when (resolved_at), by which client (resolved_by) and the note.

ALTER TABLE site_alarms
  ADD COLUMN resolved_by text,
  ADD CONSTRAINT site_alarms_severity_check CHECK (severity IN ('critical', 'major', 'minor', 'warning', 'info')),
  ADD CONSTRAINT site_alarms_equipment_check CHECK ((equipment_type_id IS NULL) = (equipment_id IS NULL)),
  ADD CONSTRAINT site_alarms_occurrences_check CHECK (occurrences >= 1),
  ADD CONSTRAINT site_alarms_seen_check CHECK (first_seen <= last_seen),
  ADD CONSTRAINT site_alarms_resolved_check CHECK (resolved_at IS NOT NULL OR (resolved_by IS NULL AND resolve_note IS NULL));

CREATE UNIQUE INDEX site_alarms_open_key ON site_alarms
  (site_id, (COALESCE(equipment_type_id, 0)), (COALESCE(equipment_id, 0)), alarm_type)
  WHERE resolved_at IS NULL;

-- The active list reads newest first by (last_seen, alarm_id); the id breaks ties in the index too.
DROP INDEX site_alarms_active_idx;
CREATE INDEX site_alarms_active_idx ON site_alarms (site_id, last_seen DESC, alarm_id DESC) WHERE resolved_at IS NULL;
