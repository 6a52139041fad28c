import type { Database, Queryable } from '../../db/index.js';
import { mergeUnits, rawUnits, rollupUnits } from './merge-units.js';
import { insertMarks, rebuildCtes } from './rebuild-statement.js';
import type { UnitSpec } from './unit-columns.js';
import { binOf, UNIT_LIST } from './units.js';
import { HORIZON_SQL, readHorizon } from '../retention/horizon.js';
import { ELIGIBLE, isDatabaseTrouble, setAside, type SetAside } from './set-aside.js';
import { daysTable } from '../archive/days.js';
import { TELEMETRY_KINDS } from '../../equipment.js';

// Keeps the rollups (migrations/003_rollups.sql) in step with the logs. Uploads mark the 15-minute
// buckets they change in rollup_dirty, in their own statement; the refresher takes a batch of marks
// (SKIP LOCKED, so several instances share the work), recomputes those buckets from the logs, then
// the hours and days that hold them from the level below, and deletes the marks, all in one
// transaction: a reader sees either the marks (and reads those buckets from the logs) or the new
// rollups, never stale rollups without their mark.
//
// Why deleting the marks first is safe: an upload that commits before the recomputation reads the
// logs is included; one that commits later either inserted or locked its mark before the DELETE
// (skipped by it, so the mark stays) or waits on the deleted mark's row lock and inserts it again
// after our commit. Either way a bucket with data the rollup lacks keeps its mark.

/**
 * Recomputes every level of the given 15-minute buckets (epoch ms) of the given equipment, in one
 * statement (rebuild-statement.ts). A bucket whose rollup another transaction changed meanwhile (an
 * upload rolling up the same quarter, hour or day) is marked again, to be recomputed from everything
 * committed. Every lookup is by key, so the work follows the number of marks, never the size of the
 * tables.
 */
export async function rebuildBuckets(
  db: Queryable,
  spec: UnitSpec,
  ids: number[],
  buckets: number[],
): Promise<void> {
  if (!ids.length) return;
  const { ctes, failed } = rebuildCtes(spec, '', { quarters: 'marked' });
  await db.query(
    `WITH marked AS MATERIALIZED (SELECT DISTINCT id, to_timestamp(ms / 1000) AS b FROM unnest($1::int[], $2::float8[]) AS u(id, ms)),
       ${ctes.join(',\n       ')}
     ${insertMarks(spec.code, failed)}`,
    [ids, buckets],
  );
}

/**
 * Takes up to `limit` marks of one kind and brings their rollups up to date; returns how many it took.
 * With `closedOnly`, marks of quarters that have not ended yet stay: a quarter that gateways are still
 * writing would otherwise be recomputed from all its logs at every refresh, work that grows with each
 * second of the quarter (at 200 sensors logging 6 samples a second, a million rows a refresh by its
 * end). Its mark makes summaries read it from the logs meanwhile, and it is rolled up once it ends.
 *
 * When the batch fails for a reason of its own (not the database's: set-aside.ts), the marks are
 * taken one at a time, and each one whose rebuild fails is set aside (`onSetAside`), so one bad bucket
 * never stops the rest.
 */
export async function refreshMarked(
  db: Database,
  spec: UnitSpec,
  limit: number,
  closedOnly = false,
  range: { from?: number; to?: number } = {},
  { onSetAside, stopped }: SetAsideOptions = {},
): Promise<number> {
  const take = { spec, closedOnly, range };
  try {
    return await rebuildTaken(db, take, limit);
  } catch (err) {
    if (isDatabaseTrouble(err)) throw err;
  }
  let taken = 0;
  while (taken < limit && !stopped?.()) {
    const tried: { mark?: { id: number; ms: number } } = {};
    try {
      const n = await rebuildTaken(db, take, 1, tried);
      if (!n) break;
    } catch (err) {
      if (isDatabaseTrouble(err) || !tried.mark) throw err;
      const aside = await setAside(db, spec, tried.mark.id, Math.round(tried.mark.ms));
      if (aside) onSetAside?.(aside, err);
    }
    taken++;
  }
  return taken;
}

export interface SetAsideOptions {
  /** A mark whose bucket could not be rolled up was set aside; retried later. */
  onSetAside?: (mark: SetAside, err: unknown) => void;
  /** Whether to stop taking marks one at a time (the refresher is stopping). */
  stopped?: () => boolean;
}

interface Take {
  spec: UnitSpec;
  closedOnly: boolean;
  range: { from?: number; to?: number };
}

/** Takes up to `limit` eligible marks and rebuilds their buckets, in one transaction; `tried` gets the last mark taken. */
async function rebuildTaken(
  db: Database,
  { spec, closedOnly, range }: Take,
  limit: number,
  tried: { mark?: { id: number; ms: number } } = {},
): Promise<number> {
  return db.transaction(async (tx) => {
    // Any `limit` marks, deleted by their row address: the scan stops at the limit, and no join or sort
    // over every mark depends on statistics that lag behind a table that fills and empties by the
    // second (a join on the key was planned as a sort and hash of all the marks: 40 % of a refresh).
    // The marks are locked, and never updated, so their addresses hold until the DELETE.
    // A mark before the retention horizon (a log that slipped in as its month was removed) is only
    // deleted: its logs are gone or about to be, and rebuilding from them would lose the rollup.
    const marks = await tx.query<{ id: number; ms: number; gone: boolean }>(
      `DELETE FROM rollup_dirty WHERE ctid = ANY(ARRAY(
         SELECT ctid FROM rollup_dirty WHERE kind = $1 AND ${ELIGIBLE} AND (NOT $3::boolean OR bucket <= now() - interval '15 minutes')
            AND ($4::float8 IS NULL OR bucket >= to_timestamp($4 / 1000)) AND ($5::float8 IS NULL OR bucket < to_timestamp($5 / 1000))
          LIMIT $2 FOR UPDATE SKIP LOCKED))
       RETURNING equipment_id AS id, date_part('epoch', bucket) * 1000 AS ms, bucket < ${HORIZON_SQL} AS gone`,
      [spec.code, limit, closedOnly, range.from ?? null, range.to ?? null],
    );
    tried.mark = marks.at(-1);
    const kept = marks.filter((mark) => !mark.gone);
    await rebuildBuckets(
      tx,
      spec,
      kept.map((mark) => mark.id),
      kept.map((mark) => Math.round(mark.ms)),
    );
    return marks.length;
  });
}

/**
 * Marks every 15-minute bucket that holds logs in [from, to) (all of them without bounds), for data
 * written around the upload path. Rows only: archived days (archive/days.ts) are never marked.
 */
export async function markAll(
  db: Queryable,
  spec: UnitSpec,
  range: { from?: number; to?: number } = {},
): Promise<void> {
  await db.query(
    `INSERT INTO rollup_dirty (kind, equipment_id, bucket)
       SELECT DISTINCT ${spec.code}::smallint, ${spec.idColumn}, ${binOf(15, 'ts')} FROM ${spec.logTable}
        WHERE ($1::float8 IS NULL OR ts >= to_timestamp($1 / 1000)) AND ($2::float8 IS NULL OR ts < to_timestamp($2 / 1000))
       ORDER BY 2, 3 ON CONFLICT DO NOTHING`,
    [range.from ?? null, range.to ?? null],
  );
}

/**
 * Builds every rollup from the logs in one pass per level, for data loaded around the upload path
 * (the demo history, bulk loads) while nothing else writes: much faster than marking every bucket.
 */
export async function rebuildAll(db: Database): Promise<void> {
  // Rows only: archived days' rollups would be deleted and never rebuilt.
  const [{ archived }] = await db.query<{ archived: boolean }>(
    `SELECT ${TELEMETRY_KINDS.map((k) => `EXISTS (SELECT 1 FROM ${daysTable(k)})`).join(' OR ')} AS archived`,
  );
  if (archived) throw new Error('rollups cannot be rebuilt from the logs once days are archived');
  // Rollups before the retention horizon are all that is left of their months: they stay. The horizon
  // is the start of a UTC month, so no hour or day above it holds a quarter below it.
  const horizon = await readHorizon(db);
  const since = (col: string) =>
    horizon === undefined ? '' : ` WHERE ${col} >= '${new Date(horizon).toISOString()}'`;
  for (const spec of UNIT_LIST) {
    const table = spec.rollupTable;
    const cols = spec.columns.map((column) => column.name).join(', ');
    const insert = (level: number, units: string) =>
      `INSERT INTO ${table} (${spec.idColumn}, level, bucket, ${cols})
         SELECT id, ${level}, grp, ${cols} FROM (${mergeUnits(spec, units, binOf(level, 't0'), 'id, grp')}) x`;
    const below = (level: number) =>
      `(SELECT ${rollupUnits(spec)} FROM (SELECT * FROM ${table}${since('bucket')}) r WHERE r.level = ${level})`;
    await db.transaction(async (tx) => {
      await tx.query(`DELETE FROM rollup_dirty WHERE kind = $1`, [spec.code]);
      // PGlite runs one transaction at a time, so emptying the table by TRUNCATE blocks no reader there,
      // and (wal_level minimal) lets the rebuilt rows skip the write-ahead log; on PostgreSQL a DELETE
      // lets summaries keep reading the old rows meanwhile.
      if (horizon !== undefined) await tx.query(`DELETE FROM ${table}${since('bucket')}`);
      else await tx.query(db.kind === 'pglite' ? `TRUNCATE ${table}` : `DELETE FROM ${table}`);
      // Rows only (archive/days.ts): for logs loaded before any of their days is archived; run after
      // days were archived, it would delete their rollups and not build them again.
      await tx.query(
        insert(15, `(SELECT ${rawUnits(spec)} FROM ${spec.logTable} g${since('g.ts')})`),
      );
      await tx.query(insert(60, below(15)));
      await tx.query(insert(1440, below(60)));
    });
  }
}

/** Refreshes until no mark is left (tests, and catching up after a bulk mark). */
export async function refreshAll(
  db: Database,
  batch = 5000,
  progress?: (done: number) => void,
): Promise<number> {
  let done = 0;
  for (const spec of UNIT_LIST) {
    for (let taken = batch; taken === batch;) {
      taken = await refreshMarked(db, spec, batch);
      done += taken;
      progress?.(done);
    }
  }
  return done;
}

/**
 * How many 15-minute buckets wait for the refresher (marks in rollup_dirty), counted up to `cap`: the
 * scan stops there, so the count costs the same however far behind the refresher is (a backlog of
 * `cap` means at least that many). With `setAsideOnly`, only the marks set aside (set-aside.ts).
 */
export async function pendingBuckets(
  db: Queryable,
  cap: number,
  { setAsideOnly = false } = {},
): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM rollup_dirty WHERE NOT $2::boolean OR retry_after IS NOT NULL LIMIT $1) x`,
    [cap, setAsideOnly],
  );
  return row?.n ?? 0;
}
