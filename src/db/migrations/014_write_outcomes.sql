-- The outcome of an upload whose commit the service may not learn (its connection broke during the
-- statement or its commit: a failover). Each upload statement writes its request id and what it
-- answers in the same statement, so the same commit: on a new connection the service looks the id
-- up, and answers as that attempt would have, or tries it again with the same id (the key makes sure
-- only one of the two attempts can commit). src/db/outcome.ts writes, reads and prunes the rows; they
-- are needed for seconds, and kept about ten minutes.
CREATE TABLE write_outcomes (
  id uuid PRIMARY KEY,
  result jsonb NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX write_outcomes_at ON write_outcomes (at);
