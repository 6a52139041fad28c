-- A mark whose bucket cannot be rolled up (its rebuild fails) is set aside rather than retried at
-- every refresh ahead of every other mark: the refresher skips it until retry_after, waiting longer
-- after each failure (failures counts them). It stays a mark meanwhile, so summaries keep reading
-- that bucket from the logs. An upload that marks it again leaves it as it is.
ALTER TABLE rollup_dirty
  ADD COLUMN retry_after timestamptz,
  ADD COLUMN failures integer NOT NULL DEFAULT 0;
