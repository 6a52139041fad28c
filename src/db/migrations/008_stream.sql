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
-- * The primary key (xid, id) is the only b-tree: followers read "xid = ANY(running then) OR
--   xid >= xmax" in key order. at (the writing statement's start) is for pruning: a BRIN index,
--   almost free on an append-only table whose rows arrive in time order.
-- * data is the event's JSON, ready to send; site_id routes it to the subscribers of that site.

CREATE TABLE stream_events (
  xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id bigint GENERATED ALWAYS AS IDENTITY,
  at timestamptz NOT NULL DEFAULT statement_timestamp(),
  site_id integer NOT NULL,
  type text NOT NULL CHECK (type IN ('reading', 'logs', 'alarm', 'config')),
  data text NOT NULL,
  PRIMARY KEY (xid, id)
);
CREATE INDEX stream_events_at_idx ON stream_events USING brin (at);

-- pruned_xid: the newest transaction whose events were pruned. A position that has not seen every
-- transaction up to it cannot be replayed (its client gets a fresh snapshot instead).
CREATE TABLE stream_state (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  pruned_xid xid8 NOT NULL DEFAULT '0'
);
INSERT INTO stream_state DEFAULT VALUES;
