import { outcomeCte } from '../db/outcome.js';
import type { Job } from './jobs.js';
import { StatementBuilder, type Statement } from './statement-builder.js';
import { addLogs, type LogMode } from './statement-logs.js';
import { addReadings } from './statement-readings.js';

export type { Statement } from './statement-builder.js';
export { keyOrder, quartersOf, type LogMode } from './statement-logs.js';

// One SQL statement stores a whole round of jobs: the logs (statement-logs.ts), the readings
// upsert (statement-readings.ts), the sites' LastCommunication and the live stream's events, as
// data-modifying CTEs. A single statement is atomic on its own, so a round costs one round trip and
// one commit. The jobs of a round have no log key in common (the writer sees to it), so no log row
// is touched twice and the rows each statement returns tell which job stored what; readings of one
// equipment are taken in order within the statement.

/** `jobs[i]` is reported as job i; `sites` are touched only when given (once per transaction). */
export function buildStatement(
  jobs: Job[],
  sites: number[] | undefined,
  mode: LogMode,
  /** Numeric arrays as binary parameters (PostgreSQL; PGlite takes none). */
  binary = false,
  /**
   * The request id whose outcome the statement records with its counts and mode, in the same
   * commit (write_outcomes; src/db/outcome.ts), so that an unknown outcome can be looked up.
   */
  outcomeId?: string,
): Statement {
  const b = new StatementBuilder(binary);
  addLogs(b, jobs, mode);
  addReadings(b, jobs);
  if (sites?.length) touchSites(b, sites);
  // In insert mode a log job stores all its entries; the query counts what the upserts stored, per
  // job and kind (a generic upload mixes kinds; the ingest metrics count per kind).
  const counted = b.counted.length
    ? b.counted
    : ['SELECT NULL::int AS job, NULL::text AS kind WHERE false'];
  const counts = `SELECT job, kind, count(*)::int AS n FROM (${counted.join(' UNION ALL ')}) x GROUP BY job, kind`;
  // The rows, and always one row at least with the transaction's id (its stream events' xid): the
  // rule evaluator takes the samples of those events from the entries this instance just stored
  // only for events of that transaction (src/alarms/rules/recent.ts). A row without a job counts nothing.
  const rows = `SELECT c.job, c.kind, c.n, x.xid FROM (SELECT pg_current_xact_id()::text AS xid) x LEFT JOIN counts c ON true`;
  if (outcomeId === undefined)
    return { sql: `WITH ${b.ctes.join(',\n')},\ncounts AS (${counts})\n${rows}`, params: b.params };
  b.params.push(outcomeId);
  const recorded = outcomeCte(
    `$${b.params.length}`,
    `jsonb_build_object('mode', '${mode}', 'rows', COALESCE(jsonb_agg(jsonb_build_array(job, kind, n)), '[]'::jsonb))`,
    'counts',
  );
  const sql = `WITH ${b.ctes.join(',\n')},\ncounts AS (${counts}),\n${recorded}
${rows}`;
  return { sql, params: b.params };
}

/**
 * LastCommunication is when the service received the upload (the clock of this transaction), to
 * the second: a site's row is written at most once a second, and never waited for. At a busy site
 * every statement would otherwise update the same row, and each would wait for the one before to
 * commit (a row lock held through its commit): writes of one site in a line behind the slowest. A
 * row another statement is writing right now is skipped: that one stores a time as recent. The
 * rows are found by key as an array (= ANY), not joined: the statement is planned once per
 * connection, and for that plan a join with `sites` could be a scan of the whole table.
 */
function touchSites(b: StatementBuilder, sites: number[]): void {
  b.ctes.push(
    `ws AS (UPDATE sites SET last_communication = now()
        WHERE site_id = ANY(ARRAY(SELECT site_id FROM sites WHERE site_id = ANY(${b.param(sites, 'int4[]')})
          AND (last_communication IS NULL OR last_communication < now() - interval '1 second')
          ORDER BY site_id FOR UPDATE SKIP LOCKED)) RETURNING 1)`,
  );
}
