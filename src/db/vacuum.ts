import type { Queryable } from './types.js';

// The service's queue tables (rollup_dirty: the rollup marks; stream_events: the live stream) get
// rows by the thousand a second and lose them as soon as they are handled. Each row deleted stays
// in the table and its index as a dead row until a VACUUM. Autovacuum does that where it runs, but
// PGlite has none, and a PostgreSQL may run with it off. Without it the table and its index grow
// for ever, and every scan for the next rows walks over all the dead ones. bench/queue-vacuum.ts on
// PostgreSQL 15 with autovacuum off: after 2 million marks taken, the refresher's look for marks
// that finds none took 98.5 ms; with a VACUUM every 100,000 marks, 0.5-2.8 ms throughout, each
// VACUUM about 14 ms. So the service vacuums these tables itself, once enough rows have been
// deleted since the last time. The same goes for alarm_rules, whose rows the rule evaluator
// rewrites (a rule's state) on passes that change it: there it counts rows updated; and for
// alarm_rule_cursor, whose one row each pass rewrites with its list of newest samples (stored out of
// line once it is long): there it counts entries written.

/** Rows deleted from a queue table after which the service vacuums it. */
export const VACUUM_AFTER_ROWS = 100_000;

/**
 * Counts the rows deleted from one table and vacuums it once `after` have been (SKIP_LOCKED: where
 * another instance is vacuuming it, this one skips).
 */
export class QueueVacuum {
  private deleted = 0;

  constructor(
    private readonly db: Queryable,
    /** A table name of the service's schema (not user input). */
    private readonly table: 'rollup_dirty' | 'stream_events' | 'alarm_rules' | 'alarm_rule_cursor',
    private readonly after = VACUUM_AFTER_ROWS,
  ) {}

  /** Notes `n` rows deleted; vacuums when they add up to `after`. Returns whether it vacuumed. */
  async note(n: number): Promise<boolean> {
    this.deleted += n;
    if (this.deleted < this.after) return false;
    this.deleted = 0;
    await this.db.query(`VACUUM (SKIP_LOCKED) ${this.table}`);
    return true;
  }
}
