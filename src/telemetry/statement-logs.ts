import { KIND_LIST, type ColumnType, type Entry, type KindSpec } from './kinds.js';
import type { Job } from './jobs.js';
import { binOf, UNITS } from './rollups/units.js';
import { insertMarks, rebuildCtes } from './rollups/rebuild-statement.js';
import { HORIZON_SQL } from './retention/horizon.js';
import { insertedLogEvents, logEvents } from './statement-log-events.js';
import { TS, type StatementBuilder } from './statement-builder.js';

// The logs part of the upload statement: per log table one INSERT ... SELECT unnest(...), ...
// (set-based, whatever the number of rows; plain, or ON CONFLICT DO UPDATE: see LogMode), the
// summaries' stale marks of the quarters it changes, and the live stream's `logs` events.

/**
 * How logs are written. 'insert': a plain INSERT, which fails on any key already stored (about twice
 * as fast as an upsert: no speculative insertion, one WAL record a row); the writer then writes the
 * same jobs again with 'upsert'. Readings are always upserted.
 */
export type LogMode = 'insert' | 'upsert';

const ARRAY_TYPE: Record<ColumnType, string> = {
  float8: 'float8[]',
  bool: 'boolean[]',
  int4: 'int4[]',
  text: 'text[]',
  timestamptz: 'timestamptz[]',
};

const QUARTER = 15 * 60_000;

/**
 * The distinct (equipment, 15-minute bucket) pairs of the entries, sorted by equipment then bucket:
 * the buckets as binOf(15, ts) makes them (epoch ms, floored to the quarter since the epoch).
 */
export function quartersOf(ids: number[], times: number[]): [number[], number[]] {
  const seen = new Map<number, Set<number>>();
  for (let i = 0; i < ids.length; i++) {
    let quarters = seen.get(ids[i]);
    if (!quarters) seen.set(ids[i], (quarters = new Set()));
    quarters.add(Math.floor(times[i] / QUARTER) * QUARTER);
  }
  const outIds: number[] = [];
  const outQuarters: number[] = [];
  for (const id of [...seen.keys()].sort((a, b) => a - b))
    for (const q of [...seen.get(id)!].sort((a, b) => a - b)) {
      outIds.push(id);
      outQuarters.push(q);
    }
  return [outIds, outQuarters];
}

/**
 * The order of the entries by (id, ts): one equipment after another, each in time order. Entries
 * usually come grouped by time or by equipment, each equipment's in time order, so this groups by
 * id (a few ids) and sorts only a group that is out of order.
 */
export function keyOrder(entries: Entry[]): number[] {
  const groups = new Map<number, number[]>();
  for (let i = 0; i < entries.length; i++) {
    const id = entries[i].id;
    const group = groups.get(id);
    if (group) group.push(i);
    else groups.set(id, [i]);
  }
  const out: number[] = [];
  for (const id of [...groups.keys()].sort((a, b) => a - b)) {
    const group = groups.get(id)!;
    for (let j = 1; j < group.length; j++)
      if (entries[group[j]].ts < entries[group[j - 1]].ts) {
        group.sort((a, b) => entries[a].ts - entries[b].ts);
        break;
      }
    for (const i of group) out.push(i);
  }
  return out;
}

/**
 * Whether any of the times lies in a quarter that has ended (by this clock; the statement checks
 * again by the database's). Quarters still being written are left to the refresher: rolling them up
 * at every upload would recompute a growing quarter again and again.
 */
const hasClosedQuarter = (times: number[]) => {
  const open = Math.floor(Date.now() / QUARTER) * QUARTER;
  return times.some((time) => time < open);
};

/**
 * Rolls up, in the upload statement, the closed quarters among those it writes (`a<k>`): those after
 * the retention horizon, in a day of the equipment with no quarter marked stale. A mark means the
 * refresher will rebuild that quarter with its hour and day, or is doing so right now (its delete of
 * the mark is not yet committed): the upload then leaves that whole day to it rather than write rows
 * the refresher may be writing too (two writers of a new row wait for each other, and the refresher
 * then waits while holding the mark this upload would wait for). Returns the relation of the quarters
 * to mark: the others, and those whose rollups another transaction changed meanwhile
 * (rebuild-statement.ts).
 */
// (OFFSET 0 keeps the look for a day's marks a lookup by key for each quarter: as an anti join, the
// generic plan could read every mark of the kind, as it did with a few hundred marks of other days.)
function rollUp(
  b: StatementBuilder,
  spec: KindSpec,
  k: number,
  fresh: string,
  replaced?: string,
): string {
  const unit = UNITS[spec.kind];
  b.ctes.push(
    `q${k} AS MATERIALIZED (SELECT id, b FROM a${k} x WHERE b + interval '15 minutes' <= now() AND b >= ${HORIZON_SQL}
        AND NOT EXISTS (SELECT 1 FROM rollup_dirty m WHERE m.kind = ${unit.code} AND m.equipment_id = x.id
          AND m.bucket >= ${binOf(1440, 'x.b')} AND m.bucket < ${binOf(1440, 'x.b')} + interval '1 day' OFFSET 0))`,
  );
  const { ctes, failed } = rebuildCtes(unit, `r${k}_`, { quarters: `q${k}`, fresh, replaced });
  b.ctes.push(...ctes);
  return `(SELECT id, b FROM a${k} WHERE (id, b) NOT IN (SELECT id, b FROM q${k})
      UNION ALL SELECT id, b FROM ${failed})`;
}

/** The log CTEs of every kind the jobs' logs hold, then (inserting) their `logs` events. */
export function addLogs(b: StatementBuilder, jobs: Job[], mode: LogMode): void {
  KIND_LIST.forEach((spec, k) => addKindLogs(b, jobs, mode, spec, k));
  if (mode === 'insert') {
    // Every entry is stored (or the statement fails), so the logs events are known before it runs.
    const events = insertedLogEvents(jobs);
    if (events.sites.length)
      b.ctes.push(events.cte(b.param(events.sites, 'int4[]'), b.param(events.data, 'text[]')));
  }
}

/** The log entries of one kind, in key order (see keyOrder), as columns; with each one's job and site when `upsert`. */
function logColumns(jobs: Job[], spec: KindSpec, upsert: boolean) {
  const picked: Entry[] = [];
  const pickedJob: number[] = [];
  jobs.forEach((job, j) => {
    if (job.role !== 'log') return;
    for (const e of job.entries)
      if (e.kind === spec.kind) {
        picked.push(e);
        pickedJob.push(j);
      }
  });
  const ids: number[] = [];
  const times: number[] = [];
  const jobOf: number[] = [];
  const siteOf: number[] = [];
  const columns: unknown[][] = spec.fields.map(() => []);
  for (const i of keyOrder(picked)) {
    const e = picked[i];
    ids.push(e.id);
    times.push(e.ts);
    if (upsert) {
      jobOf.push(pickedJob[i]);
      siteOf.push(e.site!);
    }
    for (let c = 0; c < columns.length; c++) columns[c].push(e.values[c]);
  }
  return { ids, times, jobOf, siteOf, columns };
}

/** The CTEs of kind `k`'s logs: its rows (i), their insert or upsert (w), marks (d) and events (e). */
function addKindLogs(b: StatementBuilder, jobs: Job[], mode: LogMode, spec: KindSpec, k: number) {
  const { ids, times, jobOf, siteOf, columns } = logColumns(jobs, spec, mode === 'upsert');
  if (!ids.length) return;
  const cols = spec.fields.map((_, c) => `c${c}`);
  // In insert mode nothing is counted in SQL, so rows need not say which job and site they belong to
  // (upserts count, and announce what they stored per job and site).
  const job = mode === 'upsert' ? ['job', 'site'] : [];
  const jobArrays = mode === 'upsert' ? [b.param(jobOf, 'int4[]'), b.param(siteOf, 'int4[]')] : [];
  const unnest = [
    b.param(ids, 'int4[]'),
    b.param(times, 'float8[]'),
    ...columns.map((v, c) => b.param(v, ARRAY_TYPE[spec.fields[c].type])),
    ...jobArrays,
  ];
  const names = spec.fields.map((f) => f.column);
  const inputs = [...cols, ...job];
  // One unnest per array in the select list (a ProjectSet: rows in array order, one at a time),
  // rather than unnest(a, b, …) in FROM, which first copies every array into a tuple store.
  const unnested = unnest.map((a, i) => `unnest(${a}) AS ${['id', 't', ...inputs][i]}`);
  b.ctes.push(
    `i${k} AS (SELECT id, ${TS} AS ts, ${inputs.join(', ')} FROM (SELECT ${unnested.join(', ')}) AS u)`,
  );
  // In key order: one equipment's minutes go into the index side by side, and concurrent
  // statements take their row locks in the same order (no deadlock between two of them). A plain
  // INSERT takes the rows as sent, sorted; an upsert sorts again, so that its lock order does not
  // rest on the order in which the executor hands the rows over.
  const insert = `INSERT INTO ${spec.table} AS t (${spec.idColumn}, ts, ${names.join(', ')})
        SELECT id, ts, ${cols.join(', ')} FROM i${k}${mode === 'upsert' ? ' ORDER BY id, ts' : ''}`;
  const code = UNITS[spec.kind].code;
  // Closed quarters are rolled up in this statement (rollUp); the others, and any the rollup could
  // not write, are marked stale in it (so in the same commit), for the refresher. Marks are sorted,
  // so concurrent statements lock them in one order.
  const closed = hasClosedQuarter(times);
  const fresh = (rows: string) =>
    `SELECT i.id AS ${spec.idColumn}, i.ts, ${names.map((n, c) => `i.c${c} AS ${n}`).join(', ')} FROM ${rows}`;
  if (mode === 'insert') {
    // Every row is new, or the statement fails: the quarters are those of all the entries, found
    // here rather than by date_bin and DISTINCT over every row (about a quarter of the database's
    // time for a 1,000-record upload), and sent sorted.
    const [markIds, markQuarters] = quartersOf(ids, times);
    b.ctes.push(
      `w${k} AS (${insert})`,
      `a${k} AS (SELECT id, to_timestamp(q / 1000) AS b
          FROM unnest(${b.param(markIds, 'int4[]')}, ${b.param(markQuarters, 'float8[]')}) AS u(id, q))`,
    );
    const stale = closed ? rollUp(b, spec, k, fresh(`i${k} i`)) : `a${k}`;
    b.ctes.push(`d${k} AS (${insertMarks(code, stale)})`);
    return;
  }
  b.ctes.push(
    `w${k} AS (${insert}
        ON CONFLICT (${spec.idColumn}, ts) DO UPDATE SET ${names.map((n) => `${n} = EXCLUDED.${n}`).join(', ')}
        WHERE (${names.map((n) => `t.${n}`).join(', ')}) IS DISTINCT FROM (${names.map((n) => `EXCLUDED.${n}`).join(', ')})
        RETURNING t.${spec.idColumn} AS id, t.ts)`,
    `a${k} AS (SELECT DISTINCT id, ${binOf(15, 'ts')} AS b FROM w${k})`,
  );
  const stale = closed
    ? rollUp(b, spec, k, fresh(`w${k} JOIN i${k} i USING (id, ts)`), `w${k}`)
    : `a${k}`;
  b.ctes.push(
    `d${k} AS (${insertMarks(code, stale)})`,
    logEvents(`e${k}`, spec.kind, `w${k} JOIN i${k} USING (id, ts)`),
  );
  b.counted.push(
    `SELECT i${k}.job, '${spec.kind}'::text AS kind FROM w${k} JOIN i${k} USING (id, ts)`,
  );
}
