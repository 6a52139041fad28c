import type { Queryable } from '../../db/index.js';
import type { Job } from '../jobs.js';
import { KINDS, type TelemetryKind } from '../kinds.js';
import { daysTable, lockDays, restoreDaysSql } from './days.js';
import { rollupDaysTable } from './rollup-days.js';

// Uploads into old days (pass.ts, days.ts): an upload holding logs older than the day before its own
// takes the advisory locks of those equipment-days (shared: uploads do not wait for each other) and
// moves those of them that are archived back to rows, in its own transaction, before its statement.
// So it meets the stored logs it replaces or duplicates as rows, with §6's counts, and the pass, which
// archives only days at least MIN_ARCHIVE_DAYS old under the same locks (exclusive), never moves a
// day an upload is writing. The next pass archives the day again. The locks are taken even where no
// day is archived: without them a pass could archive a day between the upload's look and its commit,
// and its statement, which does not see the upload's rows (not committed when it began), would leave
// them beside the archive row.

const DAY = 86_400_000;

/** The start of the day before today's (epoch ms): logs before it take the archive path. */
export const oldBefore = (now: number) => Math.floor(now / DAY) * DAY - DAY;

/** The equipment-days of the jobs' entries older than `before`, per kind: ids and day starts, pairwise. */
export function oldDays(
  jobs: Job[],
  before: number,
): Map<TelemetryKind, { ids: number[]; days: number[] }> {
  const seen = new Map<TelemetryKind, Set<string>>();
  const out = new Map<TelemetryKind, { ids: number[]; days: number[] }>();
  for (const job of jobs)
    for (const e of job.entries) {
      if (e.ts >= before) continue;
      const day = Math.floor(e.ts / DAY) * DAY;
      const key = `${e.id}:${day}`;
      let keys = seen.get(e.kind);
      if (!keys) seen.set(e.kind, (keys = new Set()));
      if (keys.has(key)) continue;
      keys.add(key);
      let pairs = out.get(e.kind);
      if (!pairs) out.set(e.kind, (pairs = { ids: [], days: [] }));
      pairs.ids.push(e.id);
      pairs.days.push(day);
    }
  return out;
}

/**
 * SQL: whether any of the equipment-days $1 (int[]), $2 (timestamptz[]) is archived, its logs or its
 * rollups (what restoreDaysSql moves back): a lookup of each day's key in both archive tables.
 */
export function anyArchivedSql(kind: TelemetryKind): string {
  const idc = KINDS[kind].idColumn;
  return `SELECT EXISTS (SELECT 1 FROM unnest($1::int[], $2::timestamptz[]) AS k(id, day)
     WHERE EXISTS (SELECT 1 FROM ${daysTable(kind)} a WHERE a.${idc} = k.id AND a.day = k.day)
        OR EXISTS (SELECT 1 FROM ${rollupDaysTable(kind)} a WHERE a.${idc} = k.id AND a.day = k.day)) AS archived`;
}

/**
 * Takes the days' locks (shared) and moves the archived ones back to rows; returns the logs moved
 * back. Whether any is archived is looked up first, under the locks, and the statement that moves
 * days back runs only then (most old uploads go to days never archived). The lookup is a statement
 * after the locks', never part of it: a statement sees what was committed when it began, and the pass
 * may commit a day it archived while the locks' statement waits for it.
 */
export async function restoreOldDays(
  tx: Queryable,
  old: Map<TelemetryKind, { ids: number[]; days: number[] }>,
): Promise<number> {
  let n = 0;
  // Kinds in one order, days in one order within each (lockDays sorts its keys): no deadlock.
  for (const kind of [...old.keys()].sort()) {
    const { ids, days } = old.get(kind)!;
    await lockDays(tx, kind, ids, days, 'shared');
    const params = [ids, days.map((d) => new Date(d).toISOString())];
    const [{ archived }] = await tx.query<{ archived: boolean }>(anyArchivedSql(kind), params, {
      prepared: true,
    });
    if (!archived) continue;
    const [row] = await tx.query<{ n: number }>(restoreDaysSql(kind), params);
    n += row.n;
  }
  return n;
}
