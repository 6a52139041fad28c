-- Edge devices over MQTT (contract 14).
--
-- * sparkplug_metrics: the bindings of the provisioning document's `sparkplugMetrics`, each a
--   Sparkplug metric (group, edge node, device or '' for the node itself, metric name) mapped to
--   one field of one piece of equipment. The equipment's site is read through its own table, so a
--   binding follows its equipment when an import moves it.
-- * mqtt_host_lease: one row per host id; the instance named by holder is the Sparkplug host
--   application until expires_at. The holder renews it every few seconds; another instance takes
--   it once it has expired (src/mqtt/lease.ts).
-- * stream_events gains the `edge` event (a node or device went online or offline).

CREATE TABLE sparkplug_metrics (
  group_id text NOT NULL,
  edge_node_id text NOT NULL,
  device_id text NOT NULL DEFAULT '',
  metric_name text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('sensor', 'meter', 'pump', 'tank')),
  equipment_id integer NOT NULL,
  field text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (group_id, edge_node_id, device_id, metric_name)
);

CREATE TABLE mqtt_host_lease (
  host_id text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
);

ALTER TABLE stream_events DROP CONSTRAINT stream_events_type_check;
ALTER TABLE stream_events ADD CONSTRAINT stream_events_type_check
  CHECK (type IN ('reading', 'logs', 'alarm', 'config', 'edge'));
