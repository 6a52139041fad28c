-- Measured values beyond 1e15 in absolute value, stored before uploads refused them. Their sums
-- overflow a double: every summary over them failed, and the rollup refresher failed on their
-- buckets again and again. Each log row holding one moves here whole (its columns as JSON), out of
-- the logs; the UTC days it was in lose their rollups (every level), and every quarter of those days
-- that still holds logs is marked, so the refresher rebuilds them from what remains and summaries
-- read those quarters from the logs until it has. `site-monitor quarantine` lists this table.

CREATE TABLE quarantined_logs (
  kind text NOT NULL CHECK (kind IN ('sensor', 'meter', 'pump', 'tank')),
  equipment_id integer NOT NULL,
  ts timestamptz NOT NULL,
  record jsonb NOT NULL,
  quarantined_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, equipment_id, ts)
);

DO $$
DECLARE
  k record;
BEGIN
  FOR k IN SELECT * FROM (VALUES
    ('sensor', 1, 'sensor_logs', 'sensor_id', 'sensor_rollups',
      'abs(value) > 1e15'),
    ('meter', 2, 'meter_logs', 'meter_id', 'meter_rollups',
      'abs(total_volume) > 1e15 OR abs(day_volume) > 1e15 OR abs(pressure) > 1e15 OR abs(flow_rate) > 1e15'),
    ('pump', 3, 'pump_logs', 'pump_id', 'pump_rollups',
      'abs(pressure) > 1e15 OR abs(frequency) > 1e15'),
    ('tank', 4, 'tank_logs', 'tank_group_id', 'tank_rollups',
      'abs(entry_tank_level) > 1e15 OR abs(exit_tank_level) > 1e15 OR abs(total_volume) > 1e15')
  ) AS t(kind, code, logs, id, rollups, beyond)
  LOOP
    EXECUTE format(
      'WITH moved AS (DELETE FROM %I WHERE %s RETURNING *)
       INSERT INTO quarantined_logs (kind, equipment_id, ts, record)
       SELECT %L, %I, ts, to_jsonb(moved) FROM moved',
      k.logs, k.beyond, k.kind, k.id);
    EXECUTE format(
      'DELETE FROM %I r USING (SELECT DISTINCT equipment_id, date_bin(''1 day'', ts, TIMESTAMPTZ ''1970-01-01 00:00:00+00'') AS d
                                 FROM quarantined_logs WHERE kind = %L) q
        WHERE r.%I = q.equipment_id AND r.bucket >= q.d AND r.bucket < q.d + interval ''1 day''',
      k.rollups, k.kind, k.id);
    EXECUTE format(
      'INSERT INTO rollup_dirty (kind, equipment_id, bucket)
       SELECT DISTINCT %s::smallint, l.%I, date_bin(''15 minutes'', l.ts, TIMESTAMPTZ ''1970-01-01 00:00:00+00'')
         FROM (SELECT DISTINCT equipment_id, date_bin(''1 day'', ts, TIMESTAMPTZ ''1970-01-01 00:00:00+00'') AS d
                 FROM quarantined_logs WHERE kind = %L) q
         JOIN %I l ON l.%I = q.equipment_id AND l.ts >= q.d AND l.ts < q.d + interval ''1 day''
       ON CONFLICT DO NOTHING',
      k.code, k.id, k.kind, k.logs, k.id);
  END LOOP;
END $$;
