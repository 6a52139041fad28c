-- Pre-aggregated telemetry for the summary downloads (POST /v1/<kind>/logs/load).
--
-- Each kind has one rollup table holding three levels of buckets, all aligned to UTC: 15 minutes
-- (level 15), hours (60) and days (1440). Every time zone's quarter hours are whole 15-minute UTC
-- buckets (offsets are multiples of 15 minutes), so level 15 composes into every interval in every
-- zone; hours serve whole-hour zones, days serve UTC. A row is a "unit": the statistics of the
-- samples in its bucket in a form that merges (counts, sums, min, max, first and last with their
-- times, and for meters the volume inside the unit plus its first and last total volume, so the
-- volume across unit edges is added when units are merged).
--
-- rollup_dirty lists the 15-minute buckets whose rollups are stale: the upload that stores logs marks
-- their buckets in the same statement, so a reader that sees the logs also sees the mark and reads
-- those buckets from the logs themselves. A background refresher recomputes marked buckets (and the
-- hour and day above them) and removes the marks in one transaction. kind: 1 sensor, 2 meter,
-- 3 pump, 4 tank.

CREATE TABLE rollup_dirty (
  kind smallint NOT NULL,
  equipment_id integer NOT NULL,
  bucket timestamptz NOT NULL,
  PRIMARY KEY (kind, equipment_id, bucket)
);

CREATE TABLE sensor_rollups (
  sensor_id integer NOT NULL,
  level smallint NOT NULL,
  bucket timestamptz NOT NULL,
  count integer NOT NULL,
  first_ts timestamptz NOT NULL,
  last_ts timestamptz NOT NULL,
  v_min double precision, v_max double precision, v_sum double precision, v_n integer NOT NULL,
  v_first double precision, v_last double precision,
  PRIMARY KEY (sensor_id, level, bucket)
);

CREATE TABLE meter_rollups (
  meter_id integer NOT NULL,
  level smallint NOT NULL,
  bucket timestamptz NOT NULL,
  count integer NOT NULL,
  first_ts timestamptz NOT NULL,
  last_ts timestamptz NOT NULL,
  fr_sum double precision, fr_n integer NOT NULL, fr_max double precision,
  p_sum double precision, p_n integer NOT NULL,
  tv_first double precision, tv_last double precision, tv_inner double precision NOT NULL,
  tv_latest double precision,
  PRIMARY KEY (meter_id, level, bucket)
);

CREATE TABLE pump_rollups (
  pump_id integer NOT NULL,
  level smallint NOT NULL,
  bucket timestamptz NOT NULL,
  count integer NOT NULL,
  first_ts timestamptz NOT NULL,
  last_ts timestamptz NOT NULL,
  run_true integer NOT NULL, run_n integer NOT NULL,
  f_sum double precision, f_n integer NOT NULL,
  p_sum double precision, p_n integer NOT NULL, p_max double precision,
  status_id_latest integer, status_latest text,
  PRIMARY KEY (pump_id, level, bucket)
);

CREATE TABLE tank_rollups (
  tank_group_id integer NOT NULL,
  level smallint NOT NULL,
  bucket timestamptz NOT NULL,
  count integer NOT NULL,
  first_ts timestamptz NOT NULL,
  last_ts timestamptz NOT NULL,
  e_min double precision, e_max double precision, e_sum double precision, e_n integer NOT NULL,
  x_min double precision, x_max double precision, x_sum double precision, x_n integer NOT NULL,
  tv_latest double precision,
  PRIMARY KEY (tank_group_id, level, bucket)
);
