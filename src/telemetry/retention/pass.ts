import type { Database } from '../../db/index.js';
import { refreshMarked } from '../rollups/refresh.js';
import { UNIT_LIST } from '../rollups/units.js';
import {
  monthName,
  monthStart,
  nextMonth,
  readHorizon,
  targetHorizon,
  writeHorizon,
} from './horizon.js';
import {
  archiveBound,
  countRows,
  deleteArchiveRows,
  deleteArchivedDays,
  dropMonth,
  LOG_TABLES,
  partitionMonths,
  partitionName,
  pendingMarks,
} from './tables.js';
import { exclusively, locked, LOCKED_TOO_LONG } from './locks.js';

// One retention pass (contract 15): every log of a UTC month that ended more than `days` days ago is
// removed once the month's rollups are complete, oldest first, so that what is removed is always
// everything before one instant, the horizon (horizon.ts). For each step:
// 1. the month's stale rollup quarters are refreshed from its logs;
// 2. one short transaction locks the four log tables against writers, checks that no stale mark is
//    left in the month (an upload may have come in meanwhile: then the month, and every later one,
//    waits for the next pass), moves the horizon and drops the month's partitions (or the archive);
// 3. archive rows before the horizon go by DELETE, in small statements, after that commit.
// Rollups are never touched: summaries read the removed months from them (download/summaries.ts).
// One pass at a time (locks.ts).

export interface RetentionReport {
  /** false: another pass was under way, and this one did nothing. */
  ran: boolean;
  days: number;
  /** Where the horizon should be (epoch ms), and where it was and is (undefined: none). */
  target: number;
  before?: number;
  after?: number;
  /** Stale rollup quarters refreshed first. */
  refreshed: number;
  /** Log table → months ('YYYY-MM') whose partition was dropped. */
  dropped: Record<string, string[]>;
  /** Archive table → rows removed (tables that lost some), and whether it was dropped whole. */
  archive: Record<string, { rows: number; dropped: boolean }>;
  /** What was left for a later pass (a month, or the archive's logs), and why; later months wait for it. */
  skipped?: { what: string; reason: string };
}

export interface RetentionOptions {
  days: number;
  /** The clock (epoch ms); tests move it. */
  now?: number;
  /** Told of each step as it is done; awaited. */
  progress?: (message: string) => void | Promise<void>;
  /** Stops the pass between two steps (the service closing). */
  signal?: AbortSignal;
}

const REFRESH_BATCH = 2000;

export async function runRetention(db: Database, opts: RetentionOptions): Promise<RetentionReport> {
  const now = opts.now ?? Date.now();
  const report: RetentionReport = {
    ran: false,
    days: opts.days,
    target: targetHorizon(now, opts.days),
    refreshed: 0,
    dropped: {},
    archive: {},
  };
  if (opts.days <= 0) return report;
  const ran = await exclusively(db, () => pass(db, opts, report));
  report.ran = ran;
  return report;
}

type Say = (message: string) => Promise<void>;

async function pass(db: Database, opts: RetentionOptions, report: RetentionReport): Promise<void> {
  const say: Say = async (m) => {
    await opts.progress?.(m);
  };
  const aborted = () => opts.signal?.aborted === true;
  report.before = report.after = await readHorizon(db);
  // The archive first (everything before the first monthly partition), then month after month.
  if (!(await archiveStep(db, report, say, aborted))) return;
  for (const month of await partitionMonths(db)) {
    const end = nextMonth(month);
    if (end > report.target || aborted()) return;
    report.refreshed += await refreshRange(db, month, end, say);
    await say(`${monthName(month)}: dropping its partitions`);
    const step = await locked(db, true, async (tx) => {
      const marks = await pendingMarks(tx, month, end);
      if (marks) return marks.count;
      await dropMonth(tx, month);
      await writeHorizon(tx, end);
      return 0;
    });
    if (step !== 0) {
      report.skipped = { what: monthName(month), reason: step === 'busy' ? BUSY : pending(step) };
      return;
    }
    report.after = end;
    for (const t of LOG_TABLES) (report.dropped[t] ??= []).push(monthName(month));
    await say(
      `${monthName(month)}: dropped ${LOG_TABLES.map((t) => partitionName(t, month)).join(', ')}`,
    );
  }
}

/**
 * Removes the archive's logs before the target (or before the first month with a stale mark): rows
 * by DELETE, or the whole archive once every row of it goes. true when the monthly partitions may follow.
 */
async function archiveStep(
  db: Database,
  report: RetentionReport,
  say: Say,
  aborted: () => boolean,
): Promise<boolean> {
  const archive = await archiveBound(db);
  const from = report.before;
  if (!archive) return true;
  const removeBefore = async (until: number) => {
    const removed = await deleteArchiveRows(db, until, say, aborted);
    for (const [t, rows] of Object.entries(removed))
      if (rows) report.archive[t] = { rows, dropped: false };
  };
  const upto = Math.min(report.target, archive.end);
  if ((from ?? -Infinity) >= upto) {
    // Nothing more is due; a log that slipped in before the horizon since (an upload racing a pass, a
    // bulk load) still goes: one index probe per equipment when there is none.
    if (from !== undefined) await removeBefore(from);
    return false;
  }
  const whole = upto === archive.end;
  report.refreshed += await refreshRange(db, from, upto, say);
  const counted: Record<string, number> = {};
  if (whole) {
    await say(`archive: counting its rows before dropping it`);
    for (const t of archive.tables) counted[t] = await countRows(db, t);
  }
  await say(`archive: removing the logs before ${iso(upto)}`);
  const step = await locked(db, whole, async (tx) => {
    const marks = await pendingMarks(tx, from, upto);
    const until = marks ? monthStart(marks.first) : upto;
    if (until > (from ?? -Infinity)) {
      await writeHorizon(tx, until);
      await deleteArchivedDays(tx, until);
    }
    if (until === archive.end)
      for (const t of archive.tables) await tx.query(`DROP TABLE IF EXISTS ${t}`);
    return { until, marks };
  });
  if (step === 'busy') {
    report.skipped = { what: `the archive's logs before ${iso(upto)}`, reason: BUSY };
    return false;
  }
  if (step.until > (from ?? -Infinity)) report.after = step.until;
  if (step.until === archive.end) {
    for (const t of archive.tables) report.archive[t] = { rows: counted[t], dropped: true };
    await say(`archive: dropped ${archive.tables.join(', ')}`);
    return true;
  }
  await removeBefore(step.until);
  if (step.marks)
    report.skipped = { what: monthName(step.marks.first), reason: pending(step.marks.count) };
  return false;
}

const iso = (t: number) => new Date(t).toISOString();
const pending = (n: number) =>
  `${n} stale rollup quarter${n === 1 ? '' : 's'} (an upload came in during the pass); a later pass removes it`;
const BUSY = `${LOCKED_TOO_LONG}; a later pass removes it`;

/** Brings the rollups of [from, to) up to date from the logs; returns how many stale quarters it refreshed. */
async function refreshRange(
  db: Database,
  from: number | undefined,
  to: number,
  say: (m: string) => Promise<void>,
): Promise<number> {
  let done = 0;
  for (const spec of UNIT_LIST)
    for (let n = REFRESH_BATCH; n === REFRESH_BATCH;) {
      n = await refreshMarked(db, spec, REFRESH_BATCH, false, { from, to });
      done += n;
      if (n) await say(`rollups before ${iso(to)}: ${done} stale quarters refreshed`);
    }
  return done;
}
