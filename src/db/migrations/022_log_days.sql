-- The archive of logs (docs/storage.md): each UTC day of one equipment's logs that the archive pass
-- compacted is one row of <kind>_log_days instead of a row per log. Its logs are in arrays, in time
-- order, one element per log: the times as milliseconds from the day's start (`tms`), or, when they
-- are evenly spaced, only the first (`t0`) and the step (`step`); each field as an array of its own
-- type, except a double that is an exact decimal, which is kept as whole numbers (`<col>_m`) and a
-- scale (`<col>_k`: the value is the number divided by 10^k, which gives back the very double).
-- PostgreSQL compresses arrays of more than about 2 kB (TOAST). `first_ts` and `last_ts` bound the
-- day's logs for lookups. The rows of a day and its archive never exist together: the pass moves a
-- day's rows into its archive in one statement, an upload into an archived day moves it back first
-- (both under the day's advisory lock, src/telemetry/archive/days.ts).

CREATE TABLE sensor_log_days (
  sensor_id integer NOT NULL,
  day timestamptz NOT NULL,
  n integer NOT NULL,
  first_ts timestamptz NOT NULL,
  last_ts timestamptz NOT NULL,
  t0 integer,
  step integer,
  tms integer[],
  value double precision[],
  value_m bigint[],
  value_k smallint,
  PRIMARY KEY (sensor_id, day)
);

CREATE TABLE meter_log_days (
  meter_id integer NOT NULL,
  day timestamptz NOT NULL,
  n integer NOT NULL,
  first_ts timestamptz NOT NULL,
  last_ts timestamptz NOT NULL,
  t0 integer,
  step integer,
  tms integer[],
  start_ts timestamptz[],
  total_volume double precision[],
  total_volume_m bigint[],
  total_volume_k smallint,
  day_volume double precision[],
  day_volume_m bigint[],
  day_volume_k smallint,
  pressure double precision[],
  pressure_m bigint[],
  pressure_k smallint,
  flow_rate double precision[],
  flow_rate_m bigint[],
  flow_rate_k smallint,
  PRIMARY KEY (meter_id, day)
);

CREATE TABLE pump_log_days (
  pump_id integer NOT NULL,
  day timestamptz NOT NULL,
  n integer NOT NULL,
  first_ts timestamptz NOT NULL,
  last_ts timestamptz NOT NULL,
  t0 integer,
  step integer,
  tms integer[],
  pressure double precision[],
  pressure_m bigint[],
  pressure_k smallint,
  running boolean[],
  frequency double precision[],
  frequency_m bigint[],
  frequency_k smallint,
  status_id integer[],
  status text[],
  PRIMARY KEY (pump_id, day)
);

CREATE TABLE tank_log_days (
  tank_group_id integer NOT NULL,
  day timestamptz NOT NULL,
  n integer NOT NULL,
  first_ts timestamptz NOT NULL,
  last_ts timestamptz NOT NULL,
  t0 integer,
  step integer,
  tms integer[],
  entry_tank_level double precision[],
  entry_tank_level_m bigint[],
  entry_tank_level_k smallint,
  exit_tank_level double precision[],
  exit_tank_level_m bigint[],
  exit_tank_level_k smallint,
  total_volume double precision[],
  total_volume_m bigint[],
  total_volume_k smallint,
  PRIMARY KEY (tank_group_id, day)
);
