import { mergeUnits, rawUnits, rollupUnits } from './merge-units.js';
import type { UnitSpec } from './unit-columns.js';
import { binOf } from './units.js';

// The CTEs that bring the rollups of some quarters (and the hours and days above them) up to date,
// shared by the upload statement (statement-logs.ts: the closed quarters it writes into, rolled up in
// the same statement) and the refresher (refresh.ts: the quarters of the marks it takes).
//
// Each level is computed from what the statement's snapshot holds (the logs of the quarters, plus the
// rows the statement itself writes, which its snapshot does not show; the hour's other quarters; the
// day's other hours) and written only where the row is still the version that snapshot saw (its
// xmin): a row another transaction changed meanwhile (an upload of the same equipment, the refresher)
// is left as that one wrote it, and the quarter is marked stale instead, so the refresher computes it
// again from everything committed. So is a row another transaction holds right now: it is skipped, not
// waited for, so an upload and the refresher (which takes its marks first, then rollup rows, while an
// upload takes rollup rows, then marks) never wait for each other in a circle. A mark is the only way a
// rollup may lag behind the logs, so every reader stays exact, and no write ever overwrites a newer
// one (no lost update).

export interface RebuildSources {
  /** A relation of distinct quarters to roll up: (id int, b timestamptz). */
  quarters: string;
  /**
   * Rows this statement writes that its snapshot does not show, as log rows (the log table's
   * columns). Only those inside `quarters` are used.
   */
  fresh?: string;
  /** A relation of keys (id, ts) among `fresh` that replace rows the snapshot holds (upserts). */
  replaced?: string;
}

const LEVEL_BELOW = { 60: 15, 1440: 60 } as const;

/**
 * The statement (or CTE body) that marks the quarters of `relation` (id, b) stale for kind `code`. A
 * mark already there is locked, not skipped (DO UPDATE whose WHERE is false locks the row and writes
 * nothing): the refresher takes marks with SKIP LOCKED, so it cannot delete that mark, and rebuild
 * without the rows this transaction writes, until it commits. With DO NOTHING it could: the mark
 * would be gone and the rollup short of those rows, with nothing left to say so. Each quarter once
 * (a row may be locked only once by one command), in key order (concurrent statements lock in one
 * order).
 */
export function insertMarks(code: number, relation: string): string {
  return `INSERT INTO rollup_dirty (kind, equipment_id, bucket)
          SELECT DISTINCT ${code}::smallint, id, b FROM ${relation} x ORDER BY 2, 3
          ON CONFLICT (kind, equipment_id, bucket) DO UPDATE SET bucket = EXCLUDED.bucket WHERE false`;
}

/**
 * The CTEs (named with `prefix`) that recompute and write the quarters of `src`, their hours and their
 * days, and the name of the CTE listing the quarters (id, b) whose rollups could not be written
 * because another transaction changed a row of them since this statement's snapshot: the caller
 * marks those stale (rollup_dirty), in the same statement.
 */
export function rebuildCtes(
  spec: UnitSpec,
  prefix: string,
  { quarters, fresh, replaced }: RebuildSources,
): { ctes: string[]; failed: string } {
  const { rollupTable: table, idColumn: idc, logTable } = spec;
  const names = spec.columns.map((column) => column.name);
  const cols = names.join(', ');
  const p = prefix;
  const ctes: string[] = [];
  const notReplaced = replaced
    ? ` AND (g.${idc}, g.ts) NOT IN (SELECT id, ts FROM ${replaced})`
    : '';
  const freshUnits = fresh
    ? `
      UNION ALL
      SELECT ${rawUnits(spec)} FROM (${fresh}) g
       WHERE (g.${idc}, ${binOf(15, 'g.ts')}) IN (SELECT id, b FROM ${quarters})`
    : '';
  // Quarters from the logs: by key, one quarter at a time (OFFSET 0 keeps each lookup a lookup).
  // Rows only: a marked quarter is never in an archived day (archive/days.ts).
  const fromLogs = `(SELECT g.* FROM ${quarters} q CROSS JOIN LATERAL (
        SELECT ${rawUnits(spec)} FROM ${logTable} g WHERE g.${idc} = q.id AND g.ts >= q.b
           AND g.ts < q.b + interval '15 minutes'${notReplaced} OFFSET 0) g${freshUnits})`;
  ctes.push(`${p}u15 AS MATERIALIZED (${mergeUnits(spec, fromLogs, binOf(15, 't0'), 'id, grp')})`);
  // Hours from their quarters, days from their hours: the snapshot's rows but those just computed,
  // and those.
  for (const level of [60, 1440] as const) {
    const below = LEVEL_BELOW[level];
    const units = `(SELECT r.* FROM (SELECT DISTINCT id, ${binOf(level, 'grp')} AS p FROM ${p}u${below}) pp
        CROSS JOIN LATERAL (
          SELECT ${rollupUnits(spec)} FROM ${table} r WHERE r.${idc} = pp.id AND r.level = ${below}
             AND r.bucket >= pp.p AND r.bucket < pp.p + interval '${level} minutes'
             AND (r.${idc}, r.bucket) NOT IN (SELECT id, grp FROM ${p}u${below}) OFFSET 0) r
      UNION ALL
      SELECT id, grp AS t0, ${cols} FROM ${p}u${below})`;
    ctes.push(
      `${p}u${level} AS MATERIALIZED (${mergeUnits(spec, units, binOf(level, 't0'), 'id, grp')})`,
    );
  }
  for (const level of [15, 60, 1440] as const) {
    // The row each unit replaces as the snapshot saw it (its address and the transaction that wrote
    // it), and its latest version, locked unless another transaction holds it (then left alone, never
    // waited for: uploads and the refresher take these rows in no common order).
    ctes.push(
      `${p}s${level} AS MATERIALIZED (SELECT u.*, c.ctid AS rt, c.xmin AS rx, l.xmin AS lx FROM ${p}u${level} u
         LEFT JOIN LATERAL (SELECT r.ctid, r.xmin FROM ${table} r
           WHERE r.${idc} = u.id AND r.level = ${level} AND r.bucket = u.grp OFFSET 0) c ON true
         LEFT JOIN LATERAL (SELECT r.xmin FROM ${table} r
           WHERE r.${idc} = u.id AND r.level = ${level} AND r.bucket = u.grp FOR UPDATE SKIP LOCKED) l ON true)`,
      // Updated where the latest version is still the snapshot's (found by address: a TID scan, whatever
      // the statistics), inserted where there was none (and none appeared meanwhile).
      `${p}w${level} AS (UPDATE ${table} t SET (${cols}) = (${names.map((n) => `s.${n}`).join(', ')})
         FROM ${p}s${level} s
         WHERE t.ctid = ANY(ARRAY(SELECT rt FROM ${p}s${level} WHERE rt IS NOT NULL AND lx = rx))
           AND t.ctid = s.rt AND s.lx = s.rx AND t.xmin = s.rx
         RETURNING t.${idc} AS id, t.bucket)`,
      `${p}n${level} AS (INSERT INTO ${table} (${idc}, level, bucket, ${cols})
         SELECT id, ${level}, grp, ${cols} FROM ${p}s${level} WHERE rt IS NULL ORDER BY id, grp
         ON CONFLICT DO NOTHING RETURNING ${idc} AS id, bucket)`,
    );
  }
  const missed = (level: number) =>
    `(SELECT id, grp FROM ${p}s${level} WHERE (id, grp) NOT IN (
        SELECT id, bucket FROM ${p}w${level} UNION ALL SELECT id, bucket FROM ${p}n${level}))`;
  // A quarter whose own row was not written is marked; so is one quarter (the first) of each hour
  // and day whose row was not written: a mark makes readers take its hour and day from the quarters
  // below (written, or marked themselves), and the refresher rebuilds the quarter, its hour and day.
  const firstOf = (level: number) =>
    `SELECT q.id, min(q.b) FROM ${quarters} q WHERE (q.id, ${binOf(level, 'q.b')}) IN ${missed(level)}
       GROUP BY q.id, ${binOf(level, 'q.b')}`;
  ctes.push(
    `${p}failed AS (SELECT q.id, q.b FROM ${quarters} q WHERE (q.id, q.b) IN ${missed(15)}
       UNION ${firstOf(60)}
       UNION ${firstOf(1440)})`,
  );
  return { ctes, failed: `${p}failed` };
}
