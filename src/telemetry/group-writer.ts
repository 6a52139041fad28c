import type { Database } from '../db/index.js';
import { DatabaseTimeout, errorCode, isDatabaseUnavailable } from '../db/deadline.js';
import type { Job, StoredByKind } from './jobs.js';
import type { TelemetryKind } from './kinds.js';
import type { Partitions } from './partitions.js';
import { buildStatement, type LogMode } from './statement.js';

// The database side of the group commit (writer.ts): a group of rounds written in one statement, or
// one transaction of a statement per round. Logs are first written with a plain INSERT (new data is
// the rule, and it is about twice as fast); a stored key makes it fail as a whole, and the same jobs
// are then upserted. What certainly or harmlessly failed is tried again.

/** After a plain INSERT met a stored key (replays), upsert straight away for this long. */
const UPSERT_AFTER_CONFLICT_MS = 2000;
const UNIQUE_VIOLATION = '23505';

const TRANSIENT = new Set(['40001', '40P01']); // serialization failure, deadlock: nothing was written
/** Worth another attempt: nothing was written, and the deadline has not passed. */
const retryable = (err: unknown) =>
  TRANSIENT.has(errorCode(err)) ||
  (isDatabaseUnavailable(err) && !(err instanceof DatabaseTimeout));

export class GroupWriter {
  private lastConflict = 0;

  constructor(
    private readonly db: Database,
    private readonly partitions: Partitions,
  ) {}

  /** Records stored per job and kind, in the order of jobs.flat() (`jobs`: the rounds' jobs). */
  async write(jobs: Job[][], deadline: number): Promise<StoredByKind[]> {
    const started = Date.now();
    const db = () => this.db.bounded(Math.max(1, deadline - Date.now()));
    const covering = this.partitions.cover(
      Math.max(...jobs.flat().map((j) => (j.role === 'log' ? j.maxTs : 0))),
    );
    if (covering) await covering;
    const sites = [...new Set(jobs.flat().flatMap((j) => j.sites))].sort((a, b) => a - b);
    const hasLogs = jobs.some((r) => r.some((j) => j.role === 'log'));
    const hasReadings = jobs.some((r) => r.some((j) => j.role === 'reading'));
    // New data is the rule: try the plain INSERT first, and upsert when a key was already there.
    // (A group of several rounds writes one key twice: its second round could never be a plain INSERT.)
    let mode: LogMode =
      jobs.length === 1 && Date.now() - this.lastConflict > UPSERT_AFTER_CONFLICT_MS
        ? 'insert'
        : 'upsert';
    for (let n = 0; ; n++) {
      try {
        return await this.execute(db(), jobs, sites, mode);
      } catch (err) {
        if (errorCode(err) === UNIQUE_VIOLATION && mode === 'insert' && hasLogs) {
          this.lastConflict = Date.now();
          mode = 'upsert';
          n--;
          continue;
        }
        // Otherwise a unique violation is a reading's first current row, written by a concurrent
        // statement after this one began (statement.ts): nothing was stored, and an attempt right
        // away sees that row.
        const raced = errorCode(err) === UNIQUE_VIOLATION;
        const again = raced ? hasReadings : retryable(err);
        // Every write is idempotent (keyed upserts), so repeating one whose outcome is unknown cannot
        // store anything twice; at worst a repeat counts as duplicates what the first attempt stored.
        if (!again || n >= 2 || Date.now() - started > (deadline - started) / 2) throw err;
        if (!raced) await new Promise((r) => setTimeout(r, 50 * (n + 1)));
      }
    }
  }

  /** Rows stored per job and kind, in the order of jobs.flat(). */
  private async execute(
    db: Database,
    rounds: Job[][],
    sites: number[],
    mode: LogMode,
  ): Promise<StoredByKind[]> {
    const results: StoredByKind[][] = [];
    const run = async (q: { query: Database['query'] }) => {
      for (let r = 0; r < rounds.length; r++) {
        const { sql, params } = buildStatement(
          rounds[r],
          r === 0 ? sites : undefined,
          mode,
          this.db.kind === 'postgres',
        );
        // A plain INSERT stores every entry of a log job (or fails); the statement counts the rest.
        const stored = rounds[r].map((job) => {
          const byKind: StoredByKind = {};
          if (mode === 'insert' && job.role === 'log')
            for (const e of job.entries) byKind[e.kind] = (byKind[e.kind] ?? 0) + 1;
          return byKind;
        });
        // Prepared: under load the same few texts (one per mix of kinds and mode) are sent hundreds of times a second.
        for (const row of await q.query<{ job: number; kind: TelemetryKind; n: number }>(
          sql,
          params,
          { prepared: true },
        ))
          stored[row.job][row.kind] = row.n;
        results.push(stored);
      }
    };
    if (rounds.length === 1) await run(db);
    else await db.transaction(run);
    return results.flat();
  }
}
