-- Administration: rotating a client's secret also retires the tokens issued before it, so a leaked
-- secret and the tokens got with it stop working together. NULL: no rotation yet.
ALTER TABLE clients ADD COLUMN tokens_not_before timestamptz;
