import type { Database } from '../db/index.js';
import { errorCode } from '../db/deadline.js';
import { metEarlierAttempt, newOutcomeId, settle } from '../db/outcome.js';
import type { Job, StoredByKind } from './jobs.js';
import type { TelemetryKind } from './kinds.js';
import type { Partitions } from './partitions.js';
import { buildStatement, type LogMode } from './statement.js';
import { oldBefore, oldDays, restoreOldDays } from './archive/upload-days.js';

// The database side of the group commit (writer.ts): a group of rounds written in one statement, or
// one transaction of a statement per round. Logs are first written with a plain INSERT (new data is
// the rule, and it is about twice as fast); a stored key makes it fail as a whole, and the same jobs
// are then upserted. What certainly failed is tried again; what may have committed (a connection
// broken by a failover) is settled by the outcome it recorded (src/db/outcome.ts).

/** After a plain INSERT met a stored key (replays), upsert straight away for this long. */
const UPSERT_AFTER_CONFLICT_MS = 2000;
const UNIQUE_VIOLATION = '23505';

const TRANSIENT = new Set(['40001', '40P01']); // serialization failure, deadlock: nothing was written
/** A reading's first current row met one a concurrent statement wrote (statement.ts): tried again at once. */
const RACED_ATTEMPTS = 2;

type CountRow = [job: number, kind: TelemetryKind, n: number];

/** What a group's write stored: per job and kind, and the id of the transaction that stored it. */
export interface Written {
  /** Records stored per job and kind, in the order of the jobs (flattened). */
  stored: StoredByKind[];
  /**
   * The storing transaction's id (its stream events' xid, as text); undefined when the write was
   * settled from the outcome an earlier attempt recorded (that attempt's id is not known).
   */
  xid: string | undefined;
}

/** What each job of a round stored: a plain INSERT stores every entry of a log job; the statement's rows count the rest. */
function countRound(round: Job[], mode: LogMode, rows: Iterable<CountRow>): StoredByKind[] {
  const stored = round.map((job) => {
    const byKind: StoredByKind = {};
    if (mode === 'insert' && job.role === 'log')
      for (const e of job.entries) byKind[e.kind] = (byKind[e.kind] ?? 0) + 1;
    return byKind;
  });
  for (const [job, kind, n] of rows) stored[job][kind] = n;
  return stored;
}

/** The counts a committed statement recorded (statement.ts: its mode and rows), as countRound makes them. */
function recordedRound(round: Job[], result: unknown): StoredByKind[] {
  const { mode, rows } = result as { mode: LogMode; rows: CountRow[] };
  return countRound(round, mode, rows);
}

export class GroupWriter {
  private lastConflict = 0;

  constructor(
    private readonly db: Database,
    private readonly partitions: Partitions,
  ) {}

  /**
   * Records stored per job and kind, in the order of jobs.flat() (`jobs`: the rounds' jobs). A write
   * whose connection broke (a failover) is settled on a new one until `deadline` (src/db/outcome.ts):
   * answered with the counts its first attempt recorded when that committed, else written again.
   */
  async write(jobs: Job[][], deadline: number): Promise<Written> {
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
    const ids = jobs.map(() => newOutcomeId());
    let raced = 0;
    const attempt = async (): Promise<Written> => {
      for (;;) {
        try {
          return await this.execute(db(), jobs, sites, mode, ids);
        } catch (err) {
          // A unique violation of a log or reading key: this statement stored nothing.
          if (errorCode(err) === UNIQUE_VIOLATION && !metEarlierAttempt(err)) {
            if (mode === 'insert' && hasLogs) {
              this.lastConflict = Date.now();
              mode = 'upsert';
              continue;
            }
            // Otherwise a reading's first current row, written by a concurrent statement after this
            // one began (statement.ts): an attempt right away sees that row.
            if (hasReadings && raced++ < RACED_ATTEMPTS) continue;
          }
          throw err;
        }
      }
    };
    return settle(attempt, {
      ids,
      until: deadline,
      transient: (err) => TRANSIENT.has(errorCode(err)),
      lookup: db,
      recorded: (found) => ({
        stored: jobs.flatMap((round, r) => recordedRound(round, found.get(ids[r]))),
        xid: undefined,
      }),
    });
  }

  /**
   * Rows stored per job and kind, in the order of jobs.flat(), and the transaction's id (every
   * round's statement returns it); round r records its outcome under ids[r].
   */
  private async execute(
    db: Database,
    rounds: Job[][],
    sites: number[],
    mode: LogMode,
    ids: string[],
  ): Promise<Written> {
    const results: StoredByKind[][] = [];
    let xid: string | undefined;
    const run = async (q: { query: Database['query'] }) => {
      for (let r = 0; r < rounds.length; r++) {
        const { sql, params } = buildStatement(
          rounds[r],
          r === 0 ? sites : undefined,
          mode,
          this.db.kind === 'postgres',
          ids[r],
        );
        // Prepared: under load the same few texts (one per mix of kinds and mode) are sent hundreds of times a second.
        const rows = await q.query<{
          job: number | null;
          kind: TelemetryKind | null;
          n: number | null;
          xid: string;
        }>(sql, params, { prepared: true });
        xid = rows[0]?.xid;
        results.push(
          countRound(
            rounds[r],
            mode,
            rows.flatMap((row): CountRow[] =>
              row.job === null ? [] : [[row.job, row.kind!, row.n!]],
            ),
          ),
        );
      }
    };
    // Logs older than yesterday may fall in archived days: those move back to rows first, in the
    // same transaction (archive/upload-days.ts).
    const old = oldDays(
      rounds.flat().filter((j) => j.role === 'log'),
      oldBefore(Date.now()),
    );
    if (old.size)
      await db.transaction(async (tx) => {
        await restoreOldDays(tx, old);
        await run(tx);
      });
    else if (rounds.length === 1) await run(db);
    else await db.transaction(run);
    return { stored: results.flat(), xid };
  }
}
