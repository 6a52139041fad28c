import type { Database, Queryable } from '../../db/index.js';
import { QueueVacuum } from '../../db/vacuum.js';
import { binOf, mergeUnits, rawUnits, rollupUnits, UNIT_LIST, type UnitSpec } from './units.js';
import { HORIZON_SQL, readHorizon } from '../retention/horizon.js';

// Keeps the rollups (migrations/003_rollups.sql) in step with the logs. Uploads mark the 15-minute
// buckets they change in rollup_dirty, in their own statement; the refresher takes a batch of marks
// (SKIP LOCKED, so several instances share the work), recomputes those buckets from the logs, then
// the hours and days that hold them from the level below, and deletes the marks, all in one
// transaction: a reader sees either the marks (and reads those buckets from the logs) or the new
// rollups, never stale rollups without their mark.
//
// Why deleting the marks first is safe: an upload that commits before the recomputation reads the
// logs is included; one that commits later either inserted its mark before the DELETE (invisible to
// it, so the mark stays) or waits on the deleted mark's row lock and inserts it again after our
// commit. Either way a bucket with data the rollup lacks keeps its mark.

const MINUTE = 60_000;

/**
 * Recomputes every level of the given 15-minute buckets (epoch ms) of the given equipment. Upserts:
 * a bucket that once held logs always does (logs are replaced, never deleted). Every join is a
 * LATERAL lookup by key, so the work follows the number of marks, never the size of the tables
 * (OFFSET 0 keeps the planner from flattening it into a hash join over a whole table).
 */
export async function rebuildBuckets(
  db: Queryable,
  spec: UnitSpec,
  ids: number[],
  buckets: number[],
): Promise<void> {
  if (!ids.length) return;
  const t = spec.rollupTable;
  const idc = spec.idColumn;
  const names = spec.columns.map((c) => c.name);
  const cols = names.join(', ');
  const upsert = (level: number, units: string) =>
    `INSERT INTO ${t} (${idc}, level, bucket, ${cols})
       SELECT id, ${level}, grp, ${cols} FROM (${mergeUnits(spec, units, binOf(level, 't0'), 'id, grp')}) x
     ON CONFLICT (${idc}, level, bucket) DO UPDATE SET ${names.map((n) => `${n} = EXCLUDED.${n}`).join(', ')}`;
  const marks = `(SELECT DISTINCT id, to_timestamp(ms / 1000) AS b FROM unnest($1::int[], $2::float8[]) AS u(id, ms)) m`;
  await db.query(
    upsert(
      15,
      `(SELECT g.* FROM ${marks} CROSS JOIN LATERAL (
        SELECT ${rawUnits(spec)} FROM ${spec.logTable} g WHERE g.${idc} = m.id AND g.ts >= m.b AND g.ts < m.b + interval '15 minutes' OFFSET 0) g)`,
    ),
    [ids, buckets],
  );
  // Hours from quarters, days from hours.
  for (const [level, below] of [
    [60, 15],
    [1440, 60],
  ] as const) {
    const parents = `(SELECT DISTINCT id, ${binOf(level, 'to_timestamp(ms / 1000)')} AS p FROM unnest($1::int[], $2::float8[]) AS u(id, ms)) pp`;
    await db.query(
      upsert(
        level,
        `(SELECT r.* FROM ${parents} CROSS JOIN LATERAL (
          SELECT ${rollupUnits(spec)} FROM ${t} r WHERE r.${idc} = pp.id AND r.level = ${below}
             AND r.bucket >= pp.p AND r.bucket < pp.p + interval '${level} minutes' OFFSET 0) r)`,
      ),
      [ids, buckets],
    );
  }
}

/**
 * Takes up to `limit` marks of one kind and brings their rollups up to date; returns how many it took.
 * With `closedOnly`, marks of quarters that have not ended yet stay: a quarter that gateways are still
 * writing would otherwise be recomputed from all its logs at every refresh, work that grows with each
 * second of the quarter (at 200 sensors logging 6 samples a second, a million rows a refresh by its
 * end). Its mark makes summaries read it from the logs meanwhile, and it is rolled up once it ends.
 */
export async function refreshMarked(
  db: Database,
  spec: UnitSpec,
  limit: number,
  closedOnly = false,
  range: { from?: number; to?: number } = {},
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
         SELECT ctid FROM rollup_dirty WHERE kind = $1 AND (NOT $3::boolean OR bucket <= now() - interval '15 minutes')
            AND ($4::float8 IS NULL OR bucket >= to_timestamp($4 / 1000)) AND ($5::float8 IS NULL OR bucket < to_timestamp($5 / 1000))
          LIMIT $2 FOR UPDATE SKIP LOCKED))
       RETURNING equipment_id AS id, date_part('epoch', bucket) * 1000 AS ms, bucket < ${HORIZON_SQL} AS gone`,
      [spec.code, limit, closedOnly, range.from ?? null, range.to ?? null],
    );
    const kept = marks.filter((m) => !m.gone);
    await rebuildBuckets(
      tx,
      spec,
      kept.map((m) => m.id),
      kept.map((m) => Math.round(m.ms)),
    );
    return marks.length;
  });
}

/** Marks every 15-minute bucket that holds logs in [from, to) (all of them without bounds), for data written around the upload path. */
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
  // Rollups before the retention horizon are all that is left of their months: they stay. The horizon
  // is the start of a UTC month, so no hour or day above it holds a quarter below it.
  const horizon = await readHorizon(db);
  const since = (col: string) =>
    horizon === undefined ? '' : ` WHERE ${col} >= '${new Date(horizon).toISOString()}'`;
  for (const spec of UNIT_LIST) {
    const t = spec.rollupTable;
    const cols = spec.columns.map((c) => c.name).join(', ');
    const insert = (level: number, units: string) =>
      `INSERT INTO ${t} (${spec.idColumn}, level, bucket, ${cols})
         SELECT id, ${level}, grp, ${cols} FROM (${mergeUnits(spec, units, binOf(level, 't0'), 'id, grp')}) x`;
    const below = (level: number) =>
      `(SELECT ${rollupUnits(spec)} FROM (SELECT * FROM ${t}${since('bucket')}) r WHERE r.level = ${level})`;
    await db.transaction(async (tx) => {
      await tx.query(`DELETE FROM rollup_dirty WHERE kind = $1`, [spec.code]);
      // PGlite runs one transaction at a time, so emptying the table by TRUNCATE blocks no reader there,
      // and (wal_level minimal) lets the rebuilt rows skip the write-ahead log; on PostgreSQL a DELETE
      // lets summaries keep reading the old rows meanwhile.
      if (horizon !== undefined) await tx.query(`DELETE FROM ${t}${since('bucket')}`);
      else await tx.query(db.kind === 'pglite' ? `TRUNCATE ${t}` : `DELETE FROM ${t}`);
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
    for (let n = batch; n === batch;) {
      n = await refreshMarked(db, spec, batch);
      done += n;
      progress?.(done);
    }
  }
  return done;
}

/**
 * How many 15-minute buckets wait for the refresher (marks in rollup_dirty), counted up to `cap`: the
 * scan stops there, so the count costs the same however far behind the refresher is (a backlog of
 * `cap` means at least that many).
 */
export async function pendingBuckets(db: Queryable, cap: number): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM rollup_dirty LIMIT $1) x`,
    [cap],
  );
  return row?.n ?? 0;
}

export interface RefresherOptions {
  intervalMs: number;
  batch: number;
  onError: (err: unknown) => void;
  /** Whether uploads are waiting to be written right now (TelemetryWriter.busy): the refresher then yields. */
  busy?: () => boolean;
  /** Marks taken after which the refresher vacuums rollup_dirty (default VACUUM_AFTER_ROWS; see db/vacuum.ts). */
  vacuumAfter?: number;
  /**
   * How long a burst of uploads has the machine to itself before the refresher takes its share
   * (default BUSY_GRACE_MS; the service's ROLLUP_BUSY_GRACE_MS).
   */
  busyGraceMs?: number;
}

/**
 * The share of the time the refresher works while uploads wait to be written. Every mark it takes is
 * work the uploads wait behind (the same cores, the same disk): once a burst of uploads has lasted
 * its grace (BUSY_GRACE_MS) it works this share of the time, so ingest keeps most of the machine, and
 * it still never stops, so a backlog left by a long burst stays bounded; it catches up at full speed
 * once the burst is over. Summaries are exact meanwhile: a stale quarter is read from the logs.
 */
export const BUSY_SHARE = 0.2;

/**
 * How long uploads that keep waiting for a write slot have the machine to themselves: the refresher
 * runs no cycle during the first BUSY_GRACE_MS of such a burst, then works its BUSY_SHARE of the time.
 * A burst shorter than this is written at full speed and its quarters are rolled up after it; in a
 * longer one the rollups fall at most this far further behind than with the share alone. Summaries
 * are exact meanwhile.
 */
export const BUSY_GRACE_MS = 30_000;

/**
 * Whether the refresher skips its cycle now: uploads are waiting (`busy`) and have been since
 * `busySince` (epoch ms; the time they began waiting) for less than `graceMs`.
 */
export function deferred(
  busy: boolean,
  busySince: number | undefined,
  now: number,
  graceMs: number,
): boolean {
  return busy && busySince !== undefined && now - busySince < graceMs;
}

/**
 * How long the refresher waits after a cycle that took `took` ms: none after a full batch (more is
 * waiting), the interval otherwise; while uploads wait (`busy`), long enough that its work is at
 * most BUSY_SHARE of the time.
 */
export function pauseAfter(full: boolean, took: number, intervalMs: number, busy: boolean): number {
  const idle = full ? 0 : intervalMs;
  if (!busy) return idle;
  return Math.max(idle, Math.ceil((took * (1 - BUSY_SHARE)) / BUSY_SHARE));
}

/**
 * Background refresh: every interval, and at once again while a batch came back full, unless uploads
 * are waiting (BUSY_GRACE_MS, then BUSY_SHARE); quarters are rolled up once they have ended (see
 * refreshMarked). Stale buckets are read from the logs meanwhile, so the refresher only decides how
 * fast summaries are, never whether they are right.
 */
export class RollupRefresher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Epoch ms since which uploads have kept waiting (undefined while they do not). */
  private busySince: number | undefined;
  /**
   * The marks it deletes leave dead rows, which nothing else clears where autovacuum does not run
   * (db/vacuum.ts).
   */
  private readonly vacuum: QueueVacuum;

  constructor(
    private readonly db: Database,
    private readonly opts: RefresherOptions,
  ) {
    this.vacuum = new QueueVacuum(db, 'rollup_dirty', opts.vacuumAfter);
  }

  start(): void {
    this.schedule(this.opts.intervalMs);
  }

  /** Waits for a refresh under way, but not for a database that does not answer (it only delays rollups). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((r) => (timer = setTimeout(r, 2000)))]);
    clearTimeout(timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      if (this.inGrace()) return this.schedule(this.opts.intervalMs);
      const started = Date.now();
      this.running = this.cycle().then((full) => this.schedule(this.pause(full, started)));
    }, ms);
    this.timer.unref();
  }

  /** Whether a burst of uploads is still within its grace; notes when a burst begins and ends. */
  private inGrace(): boolean {
    const busy = this.opts.busy?.() ?? false;
    const now = Date.now();
    if (!busy) this.busySince = undefined;
    else this.busySince ??= now;
    return deferred(busy, this.busySince, now, this.opts.busyGraceMs ?? BUSY_GRACE_MS);
  }

  private pause(full: boolean, started: number): number {
    return pauseAfter(
      full,
      Date.now() - started,
      this.opts.intervalMs,
      this.opts.busy?.() ?? false,
    );
  }

  /** true when some kind had a full batch (more is waiting). */
  private async cycle(): Promise<boolean> {
    let full = false;
    let taken = 0;
    try {
      for (const spec of UNIT_LIST) {
        if (this.stopped) break;
        const n = await refreshMarked(this.db, spec, this.opts.batch, true);
        taken += n;
        if (n === this.opts.batch) full = true;
      }
      if (!this.stopped) await this.vacuum.note(taken);
    } catch (err) {
      this.opts.onError(err);
    }
    return full;
  }
}

export const minutes = (level: number) => level * MINUTE;
