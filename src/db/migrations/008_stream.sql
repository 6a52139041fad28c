-- The live stream's events (GET /v1/stream): written by the statement or transaction that stores
-- the data they describe, so they exist exactly when that data is committed, and read by every
-- instance that has subscribers (and for replay after a reconnect, while retained).
--
-- * xid is the writing transaction (its top-level id; pg_current_xact_id() also makes sure it has
--   one before any row is written). Instances follow the table by transaction, as a PostgreSQL
--   snapshot sees it: a position is "every transaction below xmax except those still running",
--   so an event committed late by a transaction that started early is never skipped, and nothing
--   waits for long transactions (src/stream/cursor.ts).
-- * id orders the events of one transaction (and names one of them inside a partly sent one).
-- * Retention: the events a snapshot taken STREAM_RETENTION_MS ago had seen are deleted, so an
--   event stays at least that long after its commit (src/stream/prune.ts).
-- * The primary key (xid, id) is the only index: followers read "xid = ANY(running then) OR
--   xid >= xmax" in key order, and pruning deletes "xid < xmax of an old snapshot" in key order.
-- * data is the event's JSON, ready to send; site_id routes it to the subscribers of that site.

CREATE TABLE stream_events (
  xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id bigint GENERATED ALWAYS AS IDENTITY,
  site_id integer NOT NULL,
  type text NOT NULL CHECK (type IN ('reading', 'logs', 'alarm', 'config')),
  data text NOT NULL,
  PRIMARY KEY (xid, id)
);

-- pruned: the position (a cursor, src/stream/cursor.ts) whose events may have been deleted; events
-- it has not seen are all still here. A client whose position has not seen everything it has
-- cannot be replayed to (it gets a fresh snapshot instead). pruned_xmax orders the positions.
CREATE TABLE stream_state (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  pruned text NOT NULL DEFAULT '',
  pruned_xmax xid8 NOT NULL DEFAULT '0'
);
INSERT INTO stream_state DEFAULT VALUES;
