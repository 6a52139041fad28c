-- Configuration: companies, sites, API clients and every kind of site equipment.
-- Every equipment table carries site_id (access checks and per-site reads filter by it) and
-- updated_at, the time of the import that last changed the record (read by the /updates paths).

CREATE TABLE service_settings (
  key text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE companies (
  company_id integer PRIMARY KEY,
  name text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sites (
  site_id integer PRIMARY KEY,
  name text NOT NULL,
  company_id integer NOT NULL REFERENCES companies(company_id),
  project_id integer,
  active boolean NOT NULL DEFAULT true,
  latitude double precision,
  longitude double precision,
  time_zone text,
  last_communication timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sites_company_idx ON sites (company_id, site_id);
CREATE INDEX sites_lower_name_idx ON sites (lower(name), site_id);

CREATE TABLE clients (
  client_id text PRIMARY KEY,
  secret_hash text NOT NULL,
  site_ids integer[],            -- NULL: every site ("*")
  camera_ids integer[],          -- NULL: every camera ("*"); '{}' none
  admin boolean NOT NULL DEFAULT false,
  disabled boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE modbus_devices (
  device_id integer PRIMARY KEY,
  site_id integer NOT NULL REFERENCES sites(site_id),
  device_name text NOT NULL,
  slave_address integer NOT NULL,
  ip_address text,
  active boolean,
  supported_io_protocol_id integer,
  last_communication timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX modbus_devices_site_idx ON modbus_devices (site_id);

CREATE TABLE registers (
  register_id bigint PRIMARY KEY,
  device_id integer NOT NULL REFERENCES modbus_devices(device_id),
  site_id integer NOT NULL REFERENCES sites(site_id),  -- the device's site, kept here so a site's registers are one index scan
  register integer NOT NULL,
  register_data_type integer NOT NULL,
  register_size integer NOT NULL,
  register_classification integer NOT NULL,
  register_access_type integer,
  bit_index integer,
  scaling_multiplier_value double precision,
  scaling_divider_value double precision,
  scaling_equation text,
  write_scaling_equation text,
  units text,
  unit_id integer,
  name text,
  description text,
  deleted boolean,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX registers_site_idx ON registers (site_id, updated_at);
CREATE INDEX registers_device_idx ON registers (device_id);

CREATE TABLE sensors (
  sensor_id integer PRIMARY KEY,
  site_id integer NOT NULL REFERENCES sites(site_id),
  name text NOT NULL,
  units text NOT NULL,
  active boolean NOT NULL,
  converted_units text,
  site_sensor_type_id integer,
  site_sensor_sub_type_id integer,
  alarm_enabled boolean,
  logging_enabled boolean,
  unit_id integer,
  converted_unit_id integer,
  equipment_id bigint,
  equipment_type_id integer,
  latitude double precision,
  longitude double precision,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sensors_site_idx ON sensors (site_id, updated_at);
CREATE INDEX sensors_equipment_idx ON sensors (equipment_type_id, equipment_id);

-- The registers a sensor reads. A register is read by at most one sensor (its Connection* fields name it).
CREATE TABLE sensor_registers (
  register_id bigint PRIMARY KEY REFERENCES registers(register_id),
  sensor_id integer NOT NULL REFERENCES sensors(sensor_id),
  site_id integer NOT NULL,
  position integer NOT NULL
);
CREATE INDEX sensor_registers_sensor_idx ON sensor_registers (sensor_id, position);
CREATE INDEX sensor_registers_site_idx ON sensor_registers (site_id);

CREATE TABLE flow_meters (
  meter_id integer PRIMARY KEY,
  site_id integer NOT NULL REFERENCES sites(site_id),
  name text NOT NULL,
  volume_units text,
  flow_units text,
  volume_unit_id integer,
  meter_type_id integer,
  site_sensor_id integer,
  site_fluid_type_id integer,
  logging_enabled boolean,
  latitude double precision,
  longitude double precision,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX flow_meters_site_idx ON flow_meters (site_id, updated_at);

CREATE TABLE pumps (
  pump_id integer PRIMARY KEY,
  site_id integer NOT NULL REFERENCES sites(site_id),
  name text NOT NULL,
  is_vfd boolean NOT NULL,
  active boolean NOT NULL,
  maximum_frequency double precision NOT NULL,
  minimum_frequency double precision NOT NULL,
  maximum_flow double precision NOT NULL,
  minimum_flow double precision NOT NULL,
  site_pump_type_id integer,
  logging_enabled boolean,
  design_type_id integer,
  latitude double precision,
  longitude double precision,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX pumps_site_idx ON pumps (site_id, updated_at);

CREATE TABLE tank_groups (
  tank_group_id integer PRIMARY KEY,
  site_id integer NOT NULL REFERENCES sites(site_id),
  name text NOT NULL,
  capacity double precision NOT NULL,
  maximum_height_level double precision NOT NULL,
  minimum_height_level double precision NOT NULL,
  number_of_tanks integer NOT NULL,
  is_oil boolean NOT NULL,
  site_tank_group_type_id integer NOT NULL,
  active boolean NOT NULL,
  volume_unit_id integer,
  logging_enabled boolean,
  latitude double precision,
  longitude double precision,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tank_groups_site_idx ON tank_groups (site_id, updated_at);

-- Register roles of meters, pumps and tank groups: role name -> register (NULL: role unconfigured).
CREATE TABLE equipment_register_roles (
  equipment_kind text NOT NULL CHECK (equipment_kind IN ('meter', 'pump', 'tank')),
  equipment_id integer NOT NULL,
  role text NOT NULL,
  register_id bigint REFERENCES registers(register_id),
  site_id integer NOT NULL,
  position integer NOT NULL,
  PRIMARY KEY (equipment_kind, equipment_id, role)
);
CREATE INDEX equipment_register_roles_site_idx ON equipment_register_roles (site_id, equipment_kind);

CREATE TABLE actuators (
  actuator_id integer PRIMARY KEY,
  site_id integer NOT NULL REFERENCES sites(site_id),
  site_actuator_status_id integer NOT NULL,
  name text NOT NULL,
  fully_closed_channel integer NOT NULL,
  fully_open_channel integer NOT NULL,
  close_channel integer NOT NULL,
  open_channel integer NOT NULL,
  digital_in_missing_alarm_active boolean NOT NULL,
  digital_in_missing_alarm_description text NOT NULL,
  auto boolean NOT NULL,
  logging_enabled boolean,
  site_in_out_device_id integer,
  site_modbus_in_out_device_id integer,
  uses_analog_control boolean,
  analog_out_channel integer,
  analog_out_site_modbus_in_out_device_id integer,
  analog_in_valve_position_channel integer,
  analog_in_site_modbus_in_out_device_id integer,
  fully_open_position double precision,
  fully_closed_position double precision,
  digital_open_valve_register_id bigint,
  digital_close_valve_register_id bigint,
  digital_fully_open_valve_register_id bigint,
  digital_fully_closed_valve_register_id bigint,
  analog_open_valve_register_id bigint,
  analog_valve_position_register_id bigint,
  analog_valve_position_sensor_id integer,
  current_valve_position double precision,
  last_closed timestamptz,
  last_opened timestamptz,
  esd_state integer,
  esd_custom_position double precision,
  monitor_status_indicators boolean,
  max_time_to_fully_open double precision,
  max_time_to_fully_close double precision,
  default_action integer,
  default_position double precision,
  "delete" boolean,
  design_type_id integer,
  latitude double precision,
  longitude double precision,
  custom_icon_url text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX actuators_site_idx ON actuators (site_id);

CREATE TABLE actuator_sensor_scalings (
  scaling_id integer PRIMARY KEY,
  actuator_id integer NOT NULL REFERENCES actuators(actuator_id),
  site_id integer NOT NULL,
  sensor_id integer NOT NULL,
  active boolean NOT NULL,
  scale_points text              -- JSON as stored; parsed when read, [] when unset or unparseable
);
CREATE INDEX actuator_sensor_scalings_site_idx ON actuator_sensor_scalings (site_id, actuator_id);

CREATE TABLE actuator_sensor_triggers (
  actuator_id integer NOT NULL REFERENCES actuators(actuator_id),
  sensor_id integer NOT NULL,
  site_id integer NOT NULL,
  position integer NOT NULL,
  top_alarm_actuator_action integer NOT NULL,
  top_alarm_custom_position double precision NOT NULL,
  bottom_alarm_actuator_action integer NOT NULL,
  bottom_alarm_custom_position double precision NOT NULL,
  time_based boolean NOT NULL,
  active boolean NOT NULL,
  top_alarm_action_active_time double precision,
  top_alarm_action_inactive_time double precision,
  bottom_alarm_action_active_time double precision,
  bottom_alarm_action_inactive_time double precision,
  PRIMARY KEY (actuator_id, position)
);
CREATE INDEX actuator_sensor_triggers_site_idx ON actuator_sensor_triggers (site_id, actuator_id);

CREATE TABLE actuator_tank_group_connections (
  connection_id integer PRIMARY KEY,
  actuator_id integer NOT NULL REFERENCES actuators(actuator_id),
  site_id integer NOT NULL,
  tank_group_id integer NOT NULL,
  level_to_open double precision NOT NULL,
  level_to_close double precision NOT NULL,
  level_to_alert_close double precision NOT NULL,
  active boolean NOT NULL,
  site_middle_tank_id integer
);
CREATE INDEX actuator_tank_group_connections_site_idx ON actuator_tank_group_connections (site_id, actuator_id);

CREATE TABLE cameras (
  camera_id integer PRIMARY KEY,
  site_id integer NOT NULL REFERENCES sites(site_id),
  name text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cameras_site_idx ON cameras (site_id);

CREATE TABLE transactions (
  transaction_id integer PRIMARY KEY,
  ticket_number bigint NOT NULL,
  site_id integer NOT NULL REFERENCES sites(site_id),
  transaction_date timestamptz NOT NULL,
  hauler_company text,
  driver_name text,
  truck_number text,
  fluid_type text,
  volume double precision,
  volume_units text,
  notes text,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX transactions_site_date_idx ON transactions (site_id, transaction_date);

CREATE TABLE transaction_changes (
  change_id bigserial PRIMARY KEY,
  transaction_id integer NOT NULL REFERENCES transactions(transaction_id),
  site_id integer NOT NULL,
  ticket_number bigint NOT NULL,
  log_type integer NOT NULL,
  log_type_name text NOT NULL,
  editor text NOT NULL,
  editor_company text NOT NULL,
  change_date timestamptz NOT NULL,
  change_items jsonb NOT NULL,
  UNIQUE (transaction_id, change_date, log_type, editor)
);
CREATE INDEX transaction_changes_date_idx ON transaction_changes (change_date, site_id);
CREATE INDEX transaction_changes_site_idx ON transaction_changes (site_id, change_date);

CREATE TABLE images (
  uuid uuid PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('ticket', 'motion')),
  site_id integer NOT NULL REFERENCES sites(site_id),
  transaction_id integer REFERENCES transactions(transaction_id),
  camera_id integer REFERENCES cameras(camera_id),
  captured_at timestamptz,
  content_type text NOT NULL,
  data bytea NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX images_transaction_idx ON images (transaction_id, kind);

-- Alarms raised by edge gateways; the site list counts the unresolved ones.
CREATE TABLE site_alarms (
  alarm_id bigserial PRIMARY KEY,
  site_id integer NOT NULL REFERENCES sites(site_id),
  equipment_type_id integer,
  equipment_id integer,
  alarm_type text NOT NULL,
  severity text NOT NULL,
  message text NOT NULL,
  value double precision,
  first_seen timestamptz NOT NULL,
  last_seen timestamptz NOT NULL,
  occurrences integer NOT NULL DEFAULT 1,
  resolved_at timestamptz,
  resolve_note text
);
CREATE INDEX site_alarms_active_idx ON site_alarms (site_id, last_seen DESC) WHERE resolved_at IS NULL;

-- Latest live reading of each piece of equipment, the record as uploaded.
CREATE TABLE current_readings (
  equipment_kind text NOT NULL CHECK (equipment_kind IN ('sensor', 'meter', 'pump', 'tank')),
  equipment_id integer NOT NULL,
  site_id integer NOT NULL,
  ts timestamptz NOT NULL,
  record jsonb NOT NULL,
  PRIMARY KEY (equipment_kind, equipment_id)
);
CREATE INDEX current_readings_site_idx ON current_readings (site_id);
