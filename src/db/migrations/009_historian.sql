-- Historian retrieval (contract 13).
--
-- * sensors.step: the sensor's interpolation mode, stepped (true) or continuous (false, the default).
--   Set by the provisioning document and the admin import; the interface's configuration responses
--   do not show it.
-- * The rollup unit gains what makes the time integral mergeable: for each averaged field, its first
--   and last sample (time and value) inside the unit and the integral of the value function between
--   them (value × seconds), stepped (_is) and/or linear (_il). Merging units adds the link between
--   neighbouring units (stepped: previous last value × gap; continuous: trapezoid), the way the meter
--   volume chain links totals (units.ts). Sensors use the unit's first_ts/v_first/last_ts/v_last and
--   keep both integrals, so a change of Step needs no rebuild. v_tmin/v_tmax: times of the lowest and
--   highest samples (earliest of equal values), for plot values.
-- * Existing rollups lack the new columns: every quarter that still has logs is marked stale, so
--   readers take its logs until the refresher has rebuilt it (and the hour and day above it).
--   Rollups of months already removed by retention keep null integrals.

ALTER TABLE sensors ADD COLUMN step boolean NOT NULL DEFAULT false;

ALTER TABLE sensor_rollups
  ADD COLUMN v_is double precision, ADD COLUMN v_il double precision,
  ADD COLUMN v_tmin timestamptz, ADD COLUMN v_tmax timestamptz;

ALTER TABLE meter_rollups
  ADD COLUMN fr_t1 timestamptz, ADD COLUMN fr_v1 double precision, ADD COLUMN fr_t2 timestamptz,
  ADD COLUMN fr_v2 double precision, ADD COLUMN fr_il double precision,
  ADD COLUMN p_t1 timestamptz, ADD COLUMN p_v1 double precision, ADD COLUMN p_t2 timestamptz,
  ADD COLUMN p_v2 double precision, ADD COLUMN p_il double precision;

ALTER TABLE pump_rollups
  ADD COLUMN r_t1 timestamptz, ADD COLUMN r_v1 double precision, ADD COLUMN r_t2 timestamptz,
  ADD COLUMN r_v2 double precision, ADD COLUMN r_is double precision,
  ADD COLUMN f_t1 timestamptz, ADD COLUMN f_v1 double precision, ADD COLUMN f_t2 timestamptz,
  ADD COLUMN f_v2 double precision, ADD COLUMN f_il double precision,
  ADD COLUMN p_t1 timestamptz, ADD COLUMN p_v1 double precision, ADD COLUMN p_t2 timestamptz,
  ADD COLUMN p_v2 double precision, ADD COLUMN p_il double precision;

ALTER TABLE tank_rollups
  ADD COLUMN e_t1 timestamptz, ADD COLUMN e_v1 double precision, ADD COLUMN e_t2 timestamptz,
  ADD COLUMN e_v2 double precision, ADD COLUMN e_il double precision,
  ADD COLUMN x_t1 timestamptz, ADD COLUMN x_v1 double precision, ADD COLUMN x_t2 timestamptz,
  ADD COLUMN x_v2 double precision, ADD COLUMN x_il double precision;

INSERT INTO rollup_dirty (kind, equipment_id, bucket)
  SELECT DISTINCT 1::smallint, sensor_id, date_bin('15 minutes', ts, TIMESTAMPTZ '1970-01-01 00:00:00+00') FROM sensor_logs
  ON CONFLICT DO NOTHING;
INSERT INTO rollup_dirty (kind, equipment_id, bucket)
  SELECT DISTINCT 2::smallint, meter_id, date_bin('15 minutes', ts, TIMESTAMPTZ '1970-01-01 00:00:00+00') FROM meter_logs
  ON CONFLICT DO NOTHING;
INSERT INTO rollup_dirty (kind, equipment_id, bucket)
  SELECT DISTINCT 3::smallint, pump_id, date_bin('15 minutes', ts, TIMESTAMPTZ '1970-01-01 00:00:00+00') FROM pump_logs
  ON CONFLICT DO NOTHING;
INSERT INTO rollup_dirty (kind, equipment_id, bucket)
  SELECT DISTINCT 4::smallint, tank_group_id, date_bin('15 minutes', ts, TIMESTAMPTZ '1970-01-01 00:00:00+00') FROM tank_logs
  ON CONFLICT DO NOTHING;
