-- Telemetry logs uploaded by edge gateways: one row per (equipment, timestamp), years of one-minute
-- data for thousands of sites (10,000 sensors log 5 billion rows a year).
--
-- Layout, and why:
-- * Each log table is range-partitioned by month on ts (UTC months). Reads (summaries, raw logs)
--   always name a time range, so the planner prunes to the months asked for; the hot month's
--   primary-key index stays small enough to live in memory while gateways write to it; retention
--   is DROP TABLE of an old month instead of a DELETE that bloats the table.
-- * The primary key (equipment id, ts) is the only index: it makes a replayed record a conflict
--   (never a second row), it is what ON CONFLICT ... DO UPDATE uses, and it serves every read,
--   which asks for some equipment over a time range. Equipment ids lead, so one equipment's
--   minutes are adjacent in the index and a batch of one sensor's minutes is a sequential insert.
-- * Fill factor stays at 100 (the default): rows are written once and read many times; a
--   replacement of values for an existing key is rare and may take a new page.
-- * No foreign keys to the equipment tables: the service checks existence (404) before writing,
--   equipment is never deleted, and a per-row foreign-key probe would double the cost of ingest.
-- * The first partition of each table, <table>_archive, holds everything older than the first
--   month created (backfill of old data). Monthly partitions are created ahead by
--   ensure_telemetry_partitions(upto), called here, at every start and whenever an upload reaches
--   past the last month created, so an insert never finds no partition. telemetry_months lists
--   the months created. The same SQL runs on PostgreSQL and on PGlite.

CREATE TABLE sensor_logs (
  sensor_id integer NOT NULL,
  ts timestamptz NOT NULL,
  value double precision NOT NULL,
  PRIMARY KEY (sensor_id, ts)
) PARTITION BY RANGE (ts);

CREATE TABLE meter_logs (
  meter_id integer NOT NULL,
  ts timestamptz NOT NULL,
  start_ts timestamptz,
  total_volume double precision,
  day_volume double precision,
  pressure double precision,
  flow_rate double precision,
  PRIMARY KEY (meter_id, ts)
) PARTITION BY RANGE (ts);

CREATE TABLE pump_logs (
  pump_id integer NOT NULL,
  ts timestamptz NOT NULL,
  pressure double precision,
  running boolean,
  frequency double precision,
  status_id integer,
  status text,
  PRIMARY KEY (pump_id, ts)
) PARTITION BY RANGE (ts);

CREATE TABLE tank_logs (
  tank_group_id integer NOT NULL,
  ts timestamptz NOT NULL,
  entry_tank_level double precision,
  exit_tank_level double precision,
  total_volume double precision,
  PRIMARY KEY (tank_group_id, ts)
) PARTITION BY RANGE (ts);

CREATE TABLE telemetry_months (
  month timestamptz PRIMARY KEY
);

-- Creates the archive partitions on first use, then one partition per UTC month of every log table
-- up to and including the month of upto. Returns the first instant that has no partition yet (the
-- end of the last month). Safe to call from several instances at once (advisory lock), and as often
-- as wanted: months that exist are left alone.
CREATE FUNCTION ensure_telemetry_partitions(upto timestamptz) RETURNS timestamptz LANGUAGE plpgsql AS $$
DECLARE
  tables text[] := ARRAY['sensor_logs', 'meter_logs', 'pump_logs', 'tank_logs'];
  t text;
  m timestamptz;
BEGIN
  PERFORM pg_advisory_xact_lock(7302);
  SELECT (max(month) AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC' INTO m FROM telemetry_months;
  IF m IS NULL THEN
    m := (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '1 month') AT TIME ZONE 'UTC';
    FOREACH t IN ARRAY tables LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (MINVALUE) TO (%L)', t || '_archive', t, m);
    END LOOP;
  END IF;
  WHILE m <= upto LOOP
    FOREACH t IN ARRAY tables LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
        t || '_p' || to_char(m AT TIME ZONE 'UTC', 'YYYY_MM'), t, m, ((m AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC');
    END LOOP;
    INSERT INTO telemetry_months (month) VALUES (m);
    m := ((m AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC';
  END LOOP;
  RETURN m;
END
$$;

SELECT ensure_telemetry_partitions(now() + interval '2 months');
