import type { Queryable } from '../db/index.js';

// Every log table is partitioned by month (migrations/002_telemetry.sql). Months are created ahead;
// this keeps the end of the last one in memory, so a write checks coverage with one comparison and
// creates the next months only when an upload reaches past them (a service running for months).

const AHEAD_MS = 62 * 86_400_000;

export class Partitions {
  /** First instant (epoch ms) with no partition yet; 0 until known. */
  private coveredUntil = 0;
  private pending: Promise<void> | undefined;

  constructor(private readonly db: Queryable) {}

  /**
   * Makes sure every time up to `upto` (epoch ms), and two months past now, has a partition. Nothing
   * to wait for (undefined) when they are known to exist, the rule: a write then goes to the database
   * in the same turn, not after other work queued meanwhile.
   */
  cover(upto: number): Promise<void> | undefined {
    return upto < this.coveredUntil ? undefined : this.create(upto);
  }

  private async create(upto: number): Promise<void> {
    while (upto >= this.coveredUntil) {
      if (!this.pending) {
        const until = new Date(Math.max(upto, Date.now() + AHEAD_MS)).toISOString();
        this.pending = this.db
          .query<{ end: Date }>('SELECT ensure_telemetry_partitions($1::timestamptz) AS "end"', [
            until,
          ])
          .then(([row]) => {
            this.coveredUntil = new Date(row.end).getTime();
          })
          .finally(() => {
            this.pending = undefined;
          });
      }
      await this.pending;
    }
  }
}
