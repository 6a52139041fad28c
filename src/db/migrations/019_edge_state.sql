-- The latest state of each Sparkplug edge node and device (contract 14), per site it serves: written
-- by the statement that stores its `edge` event (src/stream/publish.ts), so in the same commit, and
-- read into the stream's snapshot (`Edge`). device_id '' is the node itself. since: when it went to
-- its present state (a birth while online, a rebirth, keeps it).

CREATE TABLE edge_state (
  site_id integer NOT NULL,
  group_id text NOT NULL,
  edge_node_id text NOT NULL,
  device_id text NOT NULL DEFAULT '',
  online boolean NOT NULL,
  since timestamptz NOT NULL,
  PRIMARY KEY (site_id, group_id, edge_node_id, device_id)
);
