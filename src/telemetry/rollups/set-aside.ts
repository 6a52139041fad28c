import type { Queryable } from '../../db/index.js';
import type { UnitSpec } from './unit-columns.js';

// No poison: a bucket whose rollup cannot be rebuilt (a value whose sum overflows, a row the merge
// cannot take) must not stop the refresher for every other bucket. Its mark is set aside with a
// growing wait (retried later), logged the first time, and counted at scrape time; it stays a mark,
// so summaries keep reading that bucket from the logs.

/** The first wait after a failure; it doubles with each further failure, up to MAX_WAIT_S. */
const FIRST_WAIT_S = 60;
const MAX_WAIT_S = 3600;

/**
 * Whether an error says the database (or the connection to it) is gone rather than that a bucket's
 * work failed: those are not the bucket's fault, and setting marks aside for them would only delay
 * rollups after an outage. PostgreSQL's classes 08 (connection), 53 (resources), 57 (operator
 * intervention: shutdown, a cancelled statement) and 40 (a deadlock or serialization failure, which a
 * retry clears), and errors without a SQLSTATE (a dropped socket, a deadline of ours).
 */
export function isDatabaseTrouble(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || /^(08|53|57|40)/.test(code);
}

/** The marks the refresher may take: those not set aside, or whose wait is over. */
export const ELIGIBLE = `(retry_after IS NULL OR retry_after <= now())`;

export interface SetAside {
  kind: UnitSpec['kind'];
  equipmentId: number;
  bucket: string;
  /** How many times it has failed, this one included. */
  failures: number;
}

/** Sets one mark aside after its rebuild failed; returns it (undefined when the mark is gone meanwhile). */
export async function setAside(
  db: Queryable,
  spec: UnitSpec,
  equipmentId: number,
  bucketMs: number,
): Promise<SetAside | undefined> {
  const [row] = await db.query<{ failures: number; bucket: string }>(
    `UPDATE rollup_dirty
        SET failures = failures + 1,
            retry_after = now() + make_interval(secs => least($5::float8, $4::float8 * 2 ^ failures))
      WHERE kind = $1 AND equipment_id = $2 AND bucket = to_timestamp($3::float8 / 1000)
     RETURNING failures, to_char(bucket AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS bucket`,
    [spec.code, equipmentId, bucketMs, FIRST_WAIT_S, MAX_WAIT_S],
  );
  return row && { kind: spec.kind, equipmentId, bucket: row.bucket, failures: row.failures };
}
