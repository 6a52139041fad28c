import type { Database, Queryable } from '../../db/index.js';
import type { Transaction } from '../../db/types.js';
import { EQUIPMENT } from '../../equipment.js';
import { KIND_LIST } from '../kinds.js';
import { monthName, monthStart, nextMonth } from './horizon.js';
import { daysTable } from '../archive/days.js';

// What retention does to the log tables (migrations/002_telemetry.sql): each is partitioned by UTC
// month, <table>_pYYYY_MM, behind <table>_archive, which holds everything older than the first
// month created. Months go by DROP TABLE; the archive loses rows by DELETE until it is dropped whole.

export const LOG_TABLES = KIND_LIST.map((k) => k.table);
export const partitionName = (table: string, month: number) =>
  `${table}_p${monthName(month).replace('-', '_')}`;
export const archiveName = (table: string) => `${table}_archive`;

const ms = (col: string) => `date_part('epoch', ${col}) * 1000`;
const iso = (t: number) => new Date(t).toISOString();

/** The archives that still exist, and where they end (the first monthly partition); undefined when none is left. */
export async function archiveBound(
  db: Queryable,
): Promise<{ tables: string[]; end: number } | undefined> {
  // pg_get_expr gives "FOR VALUES FROM (MINVALUE) TO ('2025-10-01 00:00:00+00')".
  const rows = await db.query<{ name: string; ms: number }>(
    `SELECT c.relname AS name,
            ${ms(`substring(pg_get_expr(c.relpartbound, c.oid) from $$TO \\('([^']+)'\\)$$)::timestamptz`)} AS ms
       FROM unnest($1::text[]) AS t(name) JOIN pg_class c ON c.oid = to_regclass(t.name)`,
    [LOG_TABLES.map(archiveName)],
  );
  if (!rows.length) return undefined;
  return { tables: rows.map((r) => r.name), end: Math.round(Number(rows[0].ms)) };
}

/** The monthly partitions' months (epoch ms), oldest first. */
export async function partitionMonths(db: Queryable): Promise<number[]> {
  const rows = await db.query<{ ms: number }>(
    `SELECT ${ms('month')} AS ms FROM telemetry_months ORDER BY month`,
  );
  return rows.map((r) => Math.round(Number(r.ms)));
}

/** The first pending rollup mark in [from, to) and how many there are. */
export async function pendingMarks(
  db: Queryable,
  from: number | undefined,
  to: number,
): Promise<{ first: number; count: number } | undefined> {
  const [row] = await db.query<{ first: number | null; n: number }>(
    `SELECT ${ms('min(bucket)')} AS first, count(*)::int AS n FROM rollup_dirty
      WHERE ($1::timestamptz IS NULL OR bucket >= $1::timestamptz) AND bucket < $2::timestamptz`,
    [from === undefined ? null : iso(from), iso(to)],
  );
  return row.n ? { first: Math.round(Number(row.first)), count: row.n } : undefined;
}

export async function dropMonth(tx: Transaction, month: number): Promise<void> {
  for (const t of LOG_TABLES) await tx.query(`DROP TABLE IF EXISTS ${partitionName(t, month)}`);
  await deleteArchivedDays(tx, nextMonth(month));
  await tx.query(`DELETE FROM telemetry_months WHERE month = $1::timestamptz`, [iso(month)]);
}

/** Removes the archived days (archive/days.ts) before `until`: retention removes them with their rows' months. */
export async function deleteArchivedDays(tx: Queryable, until: number): Promise<void> {
  for (const kind of KIND_LIST)
    await tx.query(`DELETE FROM ${daysTable(kind.kind)} WHERE day < $1::timestamptz`, [iso(until)]);
}

export async function countRows(db: Queryable, table: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::float8 AS n FROM ${table}`);
  return Number(row.n);
}

/** Equipment per DELETE statement: a month of one-minute logs of 50 equipment is about 2 million rows. */
const ID_BATCH = 50;

/**
 * Deletes the archive's rows before `until`, a month and a batch of equipment at a time (each
 * statement an index range scan of the primary key, short enough for statement_timeout); returns the
 * rows removed per archive table. Equipment comes from its own table: every log's equipment is there
 * (an upload of unknown equipment is a 404, and equipment is never deleted).
 */
export async function deleteArchiveRows(
  db: Database,
  until: number,
  progress: (message: string) => Promise<void>,
  aborted: () => boolean,
): Promise<Record<string, number>> {
  const removed: Record<string, number> = {};
  const existing = await archiveBound(db);
  for (const kind of KIND_LIST) {
    const archive = archiveName(kind.table);
    if (!existing?.tables.includes(archive)) continue;
    const { table: equipment } = EQUIPMENT[kind.kind];
    const idc = kind.idColumn;
    const [first] = await db.query<{ ms: number | null }>(
      `SELECT ${ms('min(f.ts)')} AS ms FROM ${equipment} e CROSS JOIN LATERAL (
         SELECT ts FROM ${archive} a WHERE a.${idc} = e.${idc} AND a.ts < $1::timestamptz ORDER BY ts LIMIT 1) f`,
      [iso(until)],
    );
    removed[archive] = 0;
    if (first.ms == null) continue;
    const ids = (
      await db.query<{ id: number }>(`SELECT ${idc} AS id FROM ${equipment} ORDER BY 1`)
    ).map((r) => r.id);
    for (let m = monthStart(Number(first.ms)); m < until; m = nextMonth(m)) {
      if (aborted()) return removed;
      let rows = 0;
      for (let i = 0; i < ids.length; i += ID_BATCH) {
        const [row] = await db.query<{ n: number }>(
          `WITH d AS (DELETE FROM ${archive} WHERE ${idc} = ANY($1::int[]) AND ts >= $2::timestamptz AND ts < $3::timestamptz RETURNING 1)
           SELECT count(*)::int AS n FROM d`,
          [ids.slice(i, i + ID_BATCH), iso(m), iso(Math.min(nextMonth(m), until))],
        );
        rows += row.n;
      }
      removed[archive] += rows;
      if (rows) await progress(`${archive} ${monthName(m)}: ${rows} rows removed`);
    }
  }
  return removed;
}
