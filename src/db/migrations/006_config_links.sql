-- When the links between equipment and registers last changed, so that the configuration /updates
-- paths see changes that leave every register row as it was, removals included. One row per link:
-- a register in a sensor's list or in a meter's, pump's or tank group's sensor registers (role NULL),
-- or a role of a meter, pump or tank group (register_id NULL). changed_at is the stamp of the last
-- import that added, moved, re-pointed or removed it; the import writes it in its own transaction.
CREATE TABLE config_link_changes (
  site_id integer NOT NULL,
  equipment_kind text NOT NULL CHECK (equipment_kind IN ('sensor', 'meter', 'pump', 'tank')),
  equipment_id integer NOT NULL,
  role text,
  register_id bigint,
  changed_at timestamptz NOT NULL,
  CHECK (role IS NULL OR register_id IS NULL),
  UNIQUE NULLS NOT DISTINCT (equipment_kind, equipment_id, role, register_id)
);
CREATE INDEX config_link_changes_site_idx ON config_link_changes (site_id);
