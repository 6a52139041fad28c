import type { Database, Queryable } from '../../db/index.js';
import { EPOCH, UNITS } from '../rollups/units.js';
import { nextMonth, readHorizon } from '../retention/horizon.js';
import { exclusively } from '../retention/locks.js';
import { archiveBound, partitionMonths, partitionName } from '../retention/tables.js';
import { KIND_LIST, KINDS, type TelemetryKind } from '../kinds.js';
import { daysTable, lockDays, moveDaySql } from './days.js';
import { moveRollupsSql, rollupDaysTable } from './rollup-days.js';

// One archive pass (docs/storage.md): every UTC day of logs that ended at least `days` days ago is
// moved, per equipment, from rows into its archive row (days.ts), oldest first, in short
// transactions of one day and up to BATCH equipment, each under those days' advisory locks (uploads
// into old days take them too, and move archived days back before writing). A day with stale rollup
// quarters waits for a later pass (its rollups must be complete: summaries read archived days from
// them). Monthly partitions left empty are truncated (their rows' space goes back to the disk; a
// DELETE alone leaves it in the table). What fails is set aside for this pass and retried by the next.
// One pass at a time (the advisory lock of retention's kind, with a key of its own).

/** Equipment per transaction: a day of one-minute logs of 50 equipment is 72,000 rows. */
const BATCH = 50;
const DAY = 86_400_000;
/** Two-key advisory lock for one pass at a time (retention has its own key). */
export const ARCHIVE_LOCK_KEY = 7304;
/**
 * Days younger than this are never archived, whatever the setting: an upload takes the archive path
 * (locks, days moved back) for logs older than one day before its own day (upload-days.ts), so a
 * day the pass may archive is always one that uploads treat so, with a day to spare.
 */
export const MIN_ARCHIVE_DAYS = 2;

export interface ArchivedKind {
  kind: TelemetryKind;
  /** Equipment-days archived, their logs, and their rollup units (quarters and hours) compacted. */
  days: number;
  logs: number;
  units: number;
  /** The rows' bytes (their tuples, line pointers and key entries) and the archive rows' bytes. */
  rowBytes: number;
  archiveBytes: number;
}

export interface ArchiveReport {
  /** false: another pass was under way, and this one did nothing. */
  ran: boolean;
  days: number;
  /** Days starting before this (epoch ms) were due. */
  until: number;
  kinds: ArchivedKind[];
  /** The log tables (every partition) and archive tables, with their indexes and TOAST, before and after. */
  tableBytes: { before: number; after: number };
  /** The rollup tables and their archive tables, likewise. */
  rollupBytes: { before: number; after: number };
  /** Monthly partitions emptied and truncated. */
  truncated: string[];
  /** Equipment-days that failed (set aside until the next pass). */
  failed: { kind: TelemetryKind; id: number; day: number; error: string }[];
}

export interface ArchiveOptions {
  days: number;
  now?: number;
  progress?: (message: string) => void | Promise<void>;
  signal?: AbortSignal;
  /** Told of each equipment-day that failed, with the error (the service logs the first time). */
  onFailure?: (f: ArchiveReport['failed'][number], err: unknown) => void;
}

const iso = (t: number) => new Date(t).toISOString();
export const archiveUntil = (now: number, days: number) =>
  Math.floor((now - days * DAY) / DAY) * DAY;

const LOG_TABLES = KIND_LIST.flatMap((k) => [k.table, daysTable(k.kind)]);
const ROLLUP_TABLES = KIND_LIST.flatMap((k) => [
  UNITS[k.kind].rollupTable,
  rollupDaysTable(k.kind),
]);

async function tableBytes(db: Database, names: string[]): Promise<number> {
  const [row] = await db.query<{ b: string }>(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::text AS b FROM pg_class c
      WHERE c.oid IN (SELECT to_regclass(n) FROM unnest($1::text[]) n
                      UNION ALL SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent IN (SELECT to_regclass(n) FROM unnest($1::text[]) n))`,
    [names],
  );
  return Number(row.b);
}

export async function runArchive(db: Database, opts: ArchiveOptions): Promise<ArchiveReport> {
  const now = opts.now ?? Date.now();
  const days = Math.max(opts.days, MIN_ARCHIVE_DAYS);
  const until = archiveUntil(now, days);
  const report: ArchiveReport = {
    ran: false,
    days,
    until,
    kinds: [],
    tableBytes: { before: 0, after: 0 },
    rollupBytes: { before: 0, after: 0 },
    truncated: [],
    failed: [],
  };
  const progress = async (m: string) => {
    await opts.progress?.(m);
  };
  report.ran = await exclusively(
    db,
    async () => {
      report.tableBytes.before = await tableBytes(db, LOG_TABLES);
      report.rollupBytes.before = await tableBytes(db, ROLLUP_TABLES);
      const horizon = (await readHorizon(db)) ?? -Infinity;
      for (const spec of KIND_LIST) {
        if (opts.signal?.aborted) break;
        const done = await archiveKind(db, spec.kind, horizon, until, report, opts, progress);
        report.kinds.push(done);
      }
      await truncateEmptyMonths(db, now, report, progress);
      report.tableBytes.after = await tableBytes(db, LOG_TABLES);
      report.rollupBytes.after = await tableBytes(db, ROLLUP_TABLES);
    },
    ARCHIVE_LOCK_KEY,
  );
  return report;
}

async function archiveKind(
  db: Database,
  kind: TelemetryKind,
  horizon: number,
  until: number,
  report: ArchiveReport,
  opts: ArchiveOptions,
  progress: (m: string) => Promise<void>,
): Promise<ArchivedKind> {
  const spec = KINDS[kind];
  const code = UNITS[kind].code;
  const out: ArchivedKind = { kind, days: 0, logs: 0, units: 0, rowBytes: 0, archiveBytes: 0 };
  // The days due that hold rows, with no stale quarter: the rows older than `until` are what the pass
  // moves (after the first pass, only what late uploads brought back).
  const due = await db.query<{ day: number; ids: number[] }>(
    `SELECT round(date_part('epoch', day) * 1000) AS day, array_agg(id ORDER BY id) AS ids FROM (
       SELECT DISTINCT ${spec.idColumn} AS id, date_bin('1 day', ts, ${EPOCH}) AS day FROM ${spec.table}
        WHERE ts >= $1::timestamptz AND ts < $2::timestamptz) x
      WHERE NOT EXISTS (SELECT 1 FROM rollup_dirty d WHERE d.kind = ${code} AND d.equipment_id = x.id
                          AND d.bucket >= x.day AND d.bucket < x.day + interval '1 day')
      GROUP BY day ORDER BY day`,
    [Number.isFinite(horizon) ? iso(horizon) : '-infinity', iso(until)],
  );
  const total = due.reduce((n, d) => n + d.ids.length, 0);
  let reported = Date.now();
  for (const { day: d, ids } of due) {
    const day = Number(d);
    for (let i = 0; i < ids.length; i += BATCH) {
      if (opts.signal?.aborted) return out;
      await moveBatch(db, kind, ids.slice(i, i + BATCH), day, out, report, opts);
    }
    if (Date.now() - reported > 2000 || day === Number(due.at(-1)!.day)) {
      reported = Date.now();
      await progress(
        `${kind}: ${out.days} of ${total} equipment-days archived (${iso(day).slice(0, 10)}), ${out.logs} logs`,
      );
    }
  }
  await compactListed(db, kind, out, opts);
  return out;
}

/**
 * Days whose logs were archived before their rollups were compacted with them (listed by migration
 * 024 in rollup_days_due): their quarters and hours are moved now, under the days' locks, where the
 * day is still archived and holds no mark (a day an upload moved back is compacted when it is
 * archived again); each listed day is then struck off.
 */
async function compactListed(
  db: Database,
  kind: TelemetryKind,
  out: ArchivedKind,
  opts: ArchiveOptions,
): Promise<void> {
  const code = UNITS[kind].code;
  for (;;) {
    if (opts.signal?.aborted) return;
    const listed = await db.query<{ day: number; ids: number[] }>(
      `SELECT round(date_part('epoch', day) * 1000) AS day, array_agg(equipment_id ORDER BY equipment_id) AS ids
         FROM (SELECT day, equipment_id FROM rollup_days_due WHERE kind = $1 ORDER BY day, equipment_id LIMIT ${BATCH}) x
        GROUP BY day ORDER BY day`,
      [code],
    );
    if (!listed.length) return;
    for (const { day: d, ids } of listed) {
      const day = Number(d);
      out.units += await db.transaction(async (tx) => {
        const still = await lockUnmarked(tx, kind, ids, day, true);
        const [moved] = still.length
          ? await tx.query<{ n: number }>(moveRollupsSql(kind), [still, iso(day), iso(day + DAY)])
          : [{ n: 0 }];
        await tx.query(
          `DELETE FROM rollup_days_due WHERE kind = $1 AND equipment_id = ANY($2::int[]) AND day = $3::timestamptz`,
          [code, ids, iso(day)],
        );
        return moved.n;
      });
    }
  }
}

/**
 * Takes the day's locks of the equipment `ids` (exclusive) and returns those of them whose day holds
 * no mark: under the locks, an upload that wrote into the day meanwhile left marks, and that
 * equipment waits. With `archived`, only those whose day is (still) archived.
 */
async function lockUnmarked(
  tx: Queryable,
  kind: TelemetryKind,
  ids: number[],
  day: number,
  archived: boolean,
): Promise<number[]> {
  await lockDays(
    tx,
    kind,
    ids,
    ids.map(() => day),
    'exclusive',
  );
  const idc = KINDS[kind].idColumn;
  const rows = await tx.query<{ id: number }>(
    `SELECT k.id FROM unnest($1::int[]) AS k(id)
      WHERE NOT EXISTS (SELECT 1 FROM rollup_dirty d WHERE d.kind = ${UNITS[kind].code} AND d.equipment_id = k.id
                          AND d.bucket >= $2::timestamptz AND d.bucket < $3::timestamptz)
        ${archived ? `AND EXISTS (SELECT 1 FROM ${daysTable(kind)} a WHERE a.${idc} = k.id AND a.day = $2::timestamptz)` : ''}
      ORDER BY 1`,
    [ids, iso(day), iso(day + DAY)],
  );
  return rows.map((r) => r.id);
}

/** One day of some equipment in one transaction; a failing batch is tried equipment by equipment. */
async function moveBatch(
  db: Database,
  kind: TelemetryKind,
  ids: number[],
  day: number,
  out: ArchivedKind,
  report: ArchiveReport,
  opts: ArchiveOptions,
): Promise<void> {
  const spec = KINDS[kind];
  try {
    const moved = await db.transaction(async (tx) => {
      const clean = await lockUnmarked(tx, kind, ids, day, false);
      if (!clean.length) return { logs: 0, days: 0, units: 0, rowBytes: 0, archiveBytes: 0 };
      const [size] = await tx.query<{ b: string }>(
        // A row's tuple, its line pointer, and its key's index entry (a tuple of 24 bytes and a pointer).
        `SELECT coalesce(sum(pg_column_size(t.*) + 4 + 28), 0)::text AS b FROM ${spec.table} t
          WHERE ${spec.idColumn} = ANY($1::int[]) AND ts >= $2::timestamptz AND ts < $3::timestamptz`,
        [clean, iso(day), iso(day + DAY)],
      );
      const rows = await tx.query<{ id: number; n: number }>(moveDaySql(kind), [
        clean,
        iso(day),
        iso(day + DAY),
      ]);
      // The day's quarters and hours follow its logs (rollup-days.ts); its day row stays.
      const [units] = await tx.query<{ n: number }>(moveRollupsSql(kind), [
        rows.map((r) => r.id),
        iso(day),
        iso(day + DAY),
      ]);
      const [stored] = await tx.query<{ b: string }>(
        `SELECT coalesce(sum(${archiveRowBytes(kind)}), 0)::text AS b FROM ${daysTable(kind)} a
          WHERE a.${spec.idColumn} = ANY($1::int[]) AND a.day = $2::timestamptz`,
        [clean, iso(day)],
      );
      return {
        logs: rows.reduce((n, r) => n + r.n, 0),
        days: rows.length,
        units: units.n,
        rowBytes: Number(size.b),
        archiveBytes: Number(stored.b),
      };
    });
    out.logs += moved.logs;
    out.units += moved.units;
    out.days += moved.days;
    out.rowBytes += moved.rowBytes;
    out.archiveBytes += moved.archiveBytes;
  } catch (err) {
    if (ids.length > 1) {
      for (const id of ids) await moveBatch(db, kind, [id], day, out, report, opts);
      return;
    }
    const failure = { kind, id: ids[0], day, error: (err as Error).message };
    report.failed.push(failure);
    opts.onFailure?.(failure, err);
  }
}

/** An archive row's stored bytes: its columns as stored (compressed where they were), its tuple header and line pointer, its key. */
function archiveRowBytes(kind: TelemetryKind): string {
  const spec = KINDS[kind];
  const cols = [
    spec.idColumn,
    'day',
    'n',
    'first_ts',
    'last_ts',
    't0',
    'step',
    'tms',
    ...spec.fields.flatMap((f) =>
      f.type === 'float8' ? [f.column, `${f.column}_m`, `${f.column}_k`] : [f.column],
    ),
  ];
  return `24 + 4 + 28 + ${cols.map((c) => `coalesce(pg_column_size(a.${c}), 0)`).join(' + ')}`;
}

/**
 * Monthly partitions of months ended before `now` that hold no row any more (every day archived) are
 * truncated: a DELETE leaves the rows' space in the table, TRUNCATE gives it back. Under a short lock
 * wait: a partition in use is left for the next pass.
 */
async function truncateEmptyMonths(
  db: Database,
  now: number,
  report: ArchiveReport,
  progress: (m: string) => Promise<void>,
): Promise<void> {
  const first = await archiveBound(db);
  const parts = [
    // Everything before the first month created (old data loaded later lands there): truncated
    // only once empty, like the others.
    ...(first?.tables ?? []),
    ...(await partitionMonths(db))
      .filter((month) => nextMonth(month) <= now)
      .flatMap((month) => KIND_LIST.map((k) => partitionName(k.table, month))),
  ];
  {
    for (const part of parts) {
      try {
        const done = await db.transaction(async (tx) => {
          await tx.query(`SET LOCAL lock_timeout = '2s'`);
          await tx.query(`LOCK TABLE ${part} IN ACCESS EXCLUSIVE MODE`);
          const [{ empty, bytes }] = await tx.query<{ empty: boolean; bytes: string }>(
            `SELECT NOT EXISTS (SELECT 1 FROM ${part}) AS empty, pg_total_relation_size('${part}')::text AS bytes`,
          );
          // An empty table of a page or two is left as it is.
          if (!empty || Number(bytes) <= 3 * 8192) return false;
          await tx.query(`TRUNCATE ${part}`);
          return true;
        });
        if (done) {
          report.truncated.push(part);
          await progress(`${part}: every day archived, its space given back`);
        }
      } catch {
        // Busy (a long read) or gone (retention dropped it): the next pass looks again.
      }
    }
  }
}
