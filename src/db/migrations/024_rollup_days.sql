-- Compact rollups of archived days (docs/storage.md): when the archive pass moves a UTC day of an
-- equipment's logs into <kind>_log_days, it moves that day's 15-minute and hourly rollup rows
-- (levels 15 and 60 of <kind>_rollups) into one row per level of <kind>_rollup_days, each column in
-- an array, one element per rollup unit in bucket order; the daily row (level 1440) stays a row.
-- `n` is how many units, `b` each unit's bucket as its index in the day (bucket = day + b × level
-- minutes), null when the row holds every bucket of the day (a unit's place is then its bucket).
-- Times are milliseconds from their unit's bucket; a double column is kept as whole numbers and a
-- scale (`<col>_m`, `<col>_k`) when that gives back the same 8 bytes for every unit of the row (as in
-- <kind>_log_days), else as doubles (`<col>`); a count of samples with a field (`<x>_n`) that equals `count` in every
-- unit as a null array; other counts and text as themselves. The arrays are stored
-- compressed in the row (storage MAIN, and toast_tuple_target 128 so that every array is tried):
-- out-of-line storage would cost more than the arrays of a day. An upload into an archived day moves
-- these rows back with its logs, in the same statement (src/telemetry/archive/days.ts).

CREATE TABLE sensor_rollup_days (
  sensor_id integer NOT NULL,
  day timestamptz NOT NULL,
  level smallint NOT NULL,
  n integer NOT NULL,
  b smallint[],
  count integer[],
  first_ts integer[],
  last_ts integer[],
  v_min double precision[],
  v_min_m bigint[],
  v_min_k smallint,
  v_max double precision[],
  v_max_m bigint[],
  v_max_k smallint,
  v_sum double precision[],
  v_sum_m bigint[],
  v_sum_k smallint,
  v_n integer[],
  v_first double precision[],
  v_first_m bigint[],
  v_first_k smallint,
  v_last double precision[],
  v_last_m bigint[],
  v_last_k smallint,
  v_is double precision[],
  v_is_m bigint[],
  v_is_k smallint,
  v_il double precision[],
  v_il_m bigint[],
  v_il_k smallint,
  v_tmin integer[],
  v_tmax integer[],
  PRIMARY KEY (sensor_id, day, level)
) WITH (toast_tuple_target = 128);

ALTER TABLE sensor_rollup_days ALTER COLUMN b SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN count SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN first_ts SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN last_ts SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_min SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_min_m SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_max SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_max_m SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_sum SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_sum_m SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_n SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_first SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_first_m SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_last SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_last_m SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_is SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_is_m SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_il SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_il_m SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_tmin SET STORAGE MAIN;
ALTER TABLE sensor_rollup_days ALTER COLUMN v_tmax SET STORAGE MAIN;

CREATE TABLE meter_rollup_days (
  meter_id integer NOT NULL,
  day timestamptz NOT NULL,
  level smallint NOT NULL,
  n integer NOT NULL,
  b smallint[],
  count integer[],
  first_ts integer[],
  last_ts integer[],
  fr_sum double precision[],
  fr_sum_m bigint[],
  fr_sum_k smallint,
  fr_n integer[],
  fr_max double precision[],
  fr_max_m bigint[],
  fr_max_k smallint,
  p_sum double precision[],
  p_sum_m bigint[],
  p_sum_k smallint,
  p_n integer[],
  tv_first double precision[],
  tv_first_m bigint[],
  tv_first_k smallint,
  tv_last double precision[],
  tv_last_m bigint[],
  tv_last_k smallint,
  tv_inner double precision[],
  tv_inner_m bigint[],
  tv_inner_k smallint,
  tv_latest double precision[],
  tv_latest_m bigint[],
  tv_latest_k smallint,
  fr_t1 integer[],
  fr_v1 double precision[],
  fr_v1_m bigint[],
  fr_v1_k smallint,
  fr_t2 integer[],
  fr_v2 double precision[],
  fr_v2_m bigint[],
  fr_v2_k smallint,
  fr_il double precision[],
  fr_il_m bigint[],
  fr_il_k smallint,
  p_t1 integer[],
  p_v1 double precision[],
  p_v1_m bigint[],
  p_v1_k smallint,
  p_t2 integer[],
  p_v2 double precision[],
  p_v2_m bigint[],
  p_v2_k smallint,
  p_il double precision[],
  p_il_m bigint[],
  p_il_k smallint,
  PRIMARY KEY (meter_id, day, level)
) WITH (toast_tuple_target = 128);

ALTER TABLE meter_rollup_days ALTER COLUMN b SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN count SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN first_ts SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN last_ts SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_sum SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_sum_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_n SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_max SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_max_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_sum SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_sum_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_n SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN tv_first SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN tv_first_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN tv_last SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN tv_last_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN tv_inner SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN tv_inner_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN tv_latest SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN tv_latest_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_t1 SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_v1 SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_v1_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_t2 SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_v2 SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_v2_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_il SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN fr_il_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_t1 SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_v1 SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_v1_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_t2 SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_v2 SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_v2_m SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_il SET STORAGE MAIN;
ALTER TABLE meter_rollup_days ALTER COLUMN p_il_m SET STORAGE MAIN;

CREATE TABLE pump_rollup_days (
  pump_id integer NOT NULL,
  day timestamptz NOT NULL,
  level smallint NOT NULL,
  n integer NOT NULL,
  b smallint[],
  count integer[],
  first_ts integer[],
  last_ts integer[],
  run_true integer[],
  run_n integer[],
  f_sum double precision[],
  f_sum_m bigint[],
  f_sum_k smallint,
  f_n integer[],
  p_sum double precision[],
  p_sum_m bigint[],
  p_sum_k smallint,
  p_max double precision[],
  p_max_m bigint[],
  p_max_k smallint,
  p_n integer[],
  status_id_latest integer[],
  status_latest text[],
  r_t1 integer[],
  r_v1 double precision[],
  r_v1_m bigint[],
  r_v1_k smallint,
  r_t2 integer[],
  r_v2 double precision[],
  r_v2_m bigint[],
  r_v2_k smallint,
  r_is double precision[],
  r_is_m bigint[],
  r_is_k smallint,
  f_t1 integer[],
  f_v1 double precision[],
  f_v1_m bigint[],
  f_v1_k smallint,
  f_t2 integer[],
  f_v2 double precision[],
  f_v2_m bigint[],
  f_v2_k smallint,
  f_il double precision[],
  f_il_m bigint[],
  f_il_k smallint,
  p_t1 integer[],
  p_v1 double precision[],
  p_v1_m bigint[],
  p_v1_k smallint,
  p_t2 integer[],
  p_v2 double precision[],
  p_v2_m bigint[],
  p_v2_k smallint,
  p_il double precision[],
  p_il_m bigint[],
  p_il_k smallint,
  PRIMARY KEY (pump_id, day, level)
) WITH (toast_tuple_target = 128);

ALTER TABLE pump_rollup_days ALTER COLUMN b SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN count SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN first_ts SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN last_ts SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN run_true SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN run_n SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_sum SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_sum_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_n SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_sum SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_sum_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_max SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_max_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_n SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN status_id_latest SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN status_latest SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN r_t1 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN r_v1 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN r_v1_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN r_t2 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN r_v2 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN r_v2_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN r_is SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN r_is_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_t1 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_v1 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_v1_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_t2 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_v2 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_v2_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_il SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN f_il_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_t1 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_v1 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_v1_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_t2 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_v2 SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_v2_m SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_il SET STORAGE MAIN;
ALTER TABLE pump_rollup_days ALTER COLUMN p_il_m SET STORAGE MAIN;

CREATE TABLE tank_rollup_days (
  tank_group_id integer NOT NULL,
  day timestamptz NOT NULL,
  level smallint NOT NULL,
  n integer NOT NULL,
  b smallint[],
  count integer[],
  first_ts integer[],
  last_ts integer[],
  e_min double precision[],
  e_min_m bigint[],
  e_min_k smallint,
  e_max double precision[],
  e_max_m bigint[],
  e_max_k smallint,
  e_sum double precision[],
  e_sum_m bigint[],
  e_sum_k smallint,
  e_n integer[],
  x_min double precision[],
  x_min_m bigint[],
  x_min_k smallint,
  x_max double precision[],
  x_max_m bigint[],
  x_max_k smallint,
  x_sum double precision[],
  x_sum_m bigint[],
  x_sum_k smallint,
  x_n integer[],
  tv_latest double precision[],
  tv_latest_m bigint[],
  tv_latest_k smallint,
  e_t1 integer[],
  e_v1 double precision[],
  e_v1_m bigint[],
  e_v1_k smallint,
  e_t2 integer[],
  e_v2 double precision[],
  e_v2_m bigint[],
  e_v2_k smallint,
  e_il double precision[],
  e_il_m bigint[],
  e_il_k smallint,
  x_t1 integer[],
  x_v1 double precision[],
  x_v1_m bigint[],
  x_v1_k smallint,
  x_t2 integer[],
  x_v2 double precision[],
  x_v2_m bigint[],
  x_v2_k smallint,
  x_il double precision[],
  x_il_m bigint[],
  x_il_k smallint,
  PRIMARY KEY (tank_group_id, day, level)
) WITH (toast_tuple_target = 128);

ALTER TABLE tank_rollup_days ALTER COLUMN b SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN count SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN first_ts SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN last_ts SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_min SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_min_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_max SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_max_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_sum SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_sum_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_n SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_min SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_min_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_max SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_max_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_sum SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_sum_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_n SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN tv_latest SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN tv_latest_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_t1 SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_v1 SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_v1_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_t2 SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_v2 SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_v2_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_il SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN e_il_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_t1 SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_v1 SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_v1_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_t2 SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_v2 SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_v2_m SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_il SET STORAGE MAIN;
ALTER TABLE tank_rollup_days ALTER COLUMN x_il_m SET STORAGE MAIN;

-- Days archived before this migration kept their quarters and hours as rows: listed here, the pass
-- compacts them (where the day is still archived) and strikes each off.
CREATE TABLE rollup_days_due (
  kind smallint NOT NULL,
  equipment_id integer NOT NULL,
  day timestamptz NOT NULL,
  PRIMARY KEY (kind, day, equipment_id)
);
INSERT INTO rollup_days_due (kind, equipment_id, day)
  SELECT 1, sensor_id, day FROM sensor_log_days
  UNION ALL SELECT 2, meter_id, day FROM meter_log_days
  UNION ALL SELECT 3, pump_id, day FROM pump_log_days
  UNION ALL SELECT 4, tank_group_id, day FROM tank_log_days;
