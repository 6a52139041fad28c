import { numericArray, type NumericArrayType } from '../db/array-params.js';
import { equipmentKey, KIND_LIST, type ColumnType, type Entry } from './kinds.js';
import type { Job } from './jobs.js';
import { binOf } from './rollups/units.js';
import { UNITS } from './rollups/units.js';
import {
  insertedLogEvents,
  logEvents,
  READING_EVENTS,
  READING_EVENTS_IN_ORDER,
} from './statement-events.js';

// One SQL statement stores a whole round of jobs: per log table one INSERT ... SELECT unnest(...), ...
// (set-based, whatever the number of rows; plain, or ON CONFLICT DO UPDATE: see LogMode), the
// readings upsert, the sites' LastCommunication and the live stream's events, as data-modifying CTEs. A single statement is atomic on its own, so a round
// costs one round trip and one commit. The jobs of a round have no log key in common (the writer
// sees to it), so no log row is touched twice and the rows each statement returns tell which job
// stored what; readings of one equipment are taken in order within the statement.

export interface Statement {
  sql: string;
  params: unknown[];
}

/** Number and boolean arrays go in binary on PostgreSQL, as literals on PGlite (array-params.ts). */
const LITERAL_TYPES = new Set(['int4[]', 'float8[]', 'boolean[]']);

const ARRAY_TYPE: Record<ColumnType, string> = {
  float8: 'float8[]',
  bool: 'boolean[]',
  int4: 'int4[]',
  text: 'text[]',
  timestamptz: 'timestamptz[]',
};

/**
 * How logs are written. 'insert': a plain INSERT, which fails on any key already stored (about twice
 * as fast as an upsert: no speculative insertion, one WAL record a row); the writer then writes the
 * same jobs again with 'upsert'. Readings are always upserted.
 */
export type LogMode = 'insert' | 'upsert';

/** A current value written whole (`t` is the row already there, when an upsert meets one). */
const INSERT_CURRENT =
  'INSERT INTO current_readings AS t (equipment_kind, equipment_id, site_id, ts, record)';
const REPLACE_CURRENT =
  'ON CONFLICT (equipment_kind, equipment_id) DO UPDATE SET site_id = EXCLUDED.site_id, ts = EXCLUDED.ts, record = EXCLUDED.record';

/** Timestamps travel as epoch milliseconds (float8, exact for every accepted time) and become timestamptz in SQL. */
const TS = 'to_timestamp(t / 1000)';

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

/** `jobs[i]` is reported as job i; `sites` are touched only when given (once per transaction). */
export function buildStatement(
  jobs: Job[],
  sites: number[] | undefined,
  mode: LogMode,
  /** Numeric arrays as binary parameters (PostgreSQL; PGlite takes none). */
  binary = false,
): Statement {
  const params: unknown[] = [];
  const p = (value: unknown[], type: string) => {
    params.push(
      LITERAL_TYPES.has(type)
        ? numericArray(value as (number | boolean | null)[], type as NumericArrayType, binary)
        : value,
    );
    return `$${params.length}::${type}`;
  };
  const ctes: string[] = [];
  const counted: string[] = [];

  KIND_LIST.forEach((spec, k) => {
    const ids: number[] = [];
    const times: number[] = [];
    const jobOf: number[] = [];
    const siteOf: number[] = [];
    const columns: unknown[][] = spec.fields.map(() => []);
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
    if (!picked.length) return;
    // Sent sorted by key, so the database needs no sort of its own (see keyOrder).
    for (const i of keyOrder(picked)) {
      const e = picked[i];
      ids.push(e.id);
      times.push(e.ts);
      if (mode === 'upsert') {
        jobOf.push(pickedJob[i]);
        siteOf.push(e.site!);
      }
      for (let c = 0; c < columns.length; c++) columns[c].push(e.values[c]);
    }
    const cols = spec.fields.map((_, c) => `c${c}`);
    // In insert mode nothing is counted in SQL, so rows need not say which job and site they belong to
    // (upserts count, and announce what they stored per job and site).
    const job = mode === 'upsert' ? ['job', 'site'] : [];
    const jobArrays = mode === 'upsert' ? [p(jobOf, 'int4[]'), p(siteOf, 'int4[]')] : [];
    const unnest = [
      p(ids, 'int4[]'),
      p(times, 'float8[]'),
      ...columns.map((v, c) => p(v, ARRAY_TYPE[spec.fields[c].type])),
      ...jobArrays,
    ];
    const names = spec.fields.map((f) => f.column);
    const inputs = [...cols, ...job];
    // One unnest per array in the select list (a ProjectSet: rows in array order, one at a time),
    // rather than unnest(a, b, …) in FROM, which first copies every array into a tuple store.
    const unnested = unnest.map((a, i) => `unnest(${a}) AS ${['id', 't', ...inputs][i]}`);
    ctes.push(
      `i${k} AS (SELECT id, ${TS} AS ts, ${inputs.join(', ')} FROM (SELECT ${unnested.join(', ')}) AS u)`,
    );
    // In key order: one equipment's minutes go into the index side by side, and concurrent
    // statements take their row locks in the same order (no deadlock between two of them). A plain
    // INSERT takes the rows as sent, sorted; an upsert sorts again, so that its lock order does not
    // rest on the order in which the executor hands the rows over.
    const insert = `INSERT INTO ${spec.table} AS t (${spec.idColumn}, ts, ${names.join(', ')})
        SELECT id, ts, ${cols.join(', ')} FROM i${k}${mode === 'upsert' ? ' ORDER BY id, ts' : ''}`;
    // The 15-minute buckets this statement changes are marked stale for the summaries, in the same
    // statement (so in the same commit); sorted, so concurrent statements lock marks in one order.
    const mark = (changed: string) =>
      `d${k} AS (INSERT INTO rollup_dirty (kind, equipment_id, bucket)
        SELECT DISTINCT ${UNITS[spec.kind].code}::smallint, id, ${binOf(15, 'ts')} FROM ${changed} ORDER BY 2, 3 ON CONFLICT DO NOTHING)`;
    if (mode === 'insert') {
      // Every row is new, or the statement fails: the quarters are those of all the entries, found
      // here rather than by date_bin and DISTINCT over every row (about a quarter of the database's
      // time for a 1,000-record upload), and sent sorted.
      const [markIds, markQuarters] = quartersOf(ids, times);
      ctes.push(
        `w${k} AS (${insert})`,
        `d${k} AS (INSERT INTO rollup_dirty (kind, equipment_id, bucket)
          SELECT ${UNITS[spec.kind].code}::smallint, id, to_timestamp(q / 1000)
            FROM unnest(${p(markIds, 'int4[]')}, ${p(markQuarters, 'float8[]')}) AS u(id, q)
          ORDER BY 2, 3 ON CONFLICT DO NOTHING)`,
      );
      return;
    }
    ctes.push(
      `w${k} AS (${insert}
        ON CONFLICT (${spec.idColumn}, ts) DO UPDATE SET ${names.map((n) => `${n} = EXCLUDED.${n}`).join(', ')}
        WHERE (${names.map((n) => `t.${n}`).join(', ')}) IS DISTINCT FROM (${names.map((n) => `EXCLUDED.${n}`).join(', ')})
        RETURNING t.${spec.idColumn} AS id, t.ts)`,
      mark(`w${k}`),
      logEvents(`e${k}`, spec.kind, `w${k} JOIN i${k} USING (id, ts)`),
    );
    counted.push(
      `SELECT i${k}.job, '${spec.kind}'::text AS kind FROM w${k} JOIN i${k} USING (id, ts)`,
    );
  });

  if (mode === 'insert') {
    // Every entry is stored (or the statement fails), so the logs events are known before it runs.
    const events = insertedLogEvents(jobs);
    if (events.sites.length)
      ctes.push(events.cte(p(events.sites, 'int4[]'), p(events.data, 'text[]')));
  }

  const readings = jobs.flatMap((job, j) =>
    job.role === 'reading' ? job.entries.map((e) => ({ e, j })) : [],
  );
  if (readings.length) {
    const unnest = [
      p(
        readings.map((r) => r.e.kind),
        'text[]',
      ),
      p(
        readings.map((r) => r.e.id),
        'int4[]',
      ),
      p(
        readings.map((r) => r.e.site),
        'int4[]',
      ),
      p(
        readings.map((r) => r.e.ts),
        'float8[]',
      ),
      p(
        readings.map((r) => JSON.stringify(r.e.record)),
        'text[]',
      ),
      p(
        readings.map((r) => r.j),
        'int4[]',
      ),
    ];
    // A reading replaces the current value unless it is older; at the same time, only if it differs.
    const seen = new Set<number>();
    const repeats = readings.some(({ e }) => {
      const key = equipmentKey(e.kind, e.id);
      return seen.size === seen.add(key).size;
    });
    if (!repeats) {
      // Each equipment once: one upsert decides, and returns the rows it wrote.
      ctes.push(
        `ir AS (SELECT kind, id, site, ${TS} AS ts, rec, job FROM unnest(${unnest.join(', ')}) AS u(kind, id, site, t, rec, job))`,
        `wr AS (${INSERT_CURRENT}
          SELECT kind, id, site, ts, rec::jsonb FROM ir ORDER BY kind, id
          ${REPLACE_CURRENT}
          WHERE t.ts < EXCLUDED.ts OR (t.ts = EXCLUDED.ts AND t.record IS DISTINCT FROM EXCLUDED.record)
          RETURNING t.equipment_kind AS kind, t.equipment_id AS id)`,
        READING_EVENTS,
      );
      counted.push(`SELECT ir.job, ir.kind FROM wr JOIN ir USING (kind, id)`);
    } else {
      // Readings of one equipment several times (a busy site's gateway sends each sensor again
      // within milliseconds): taken in order (n, the group's order) as if one after another, in this
      // one statement. The current rows are locked first, in key order, and read as committed (FOR
      // UPDATE reads the newest version); each reading is compared with the state before it (the
      // newest earlier time, and the record of the last reading at that time), and only each
      // equipment's last stored reading is written. Equipment with no current row yet is written
      // with a plain INSERT: should a concurrent statement have written its first row meanwhile,
      // this one fails (unique violation, nothing written) and the writer repeats it. (A statement
      // of its own: its per-equipment lookups make the planner's generic plan look costly, and each
      // equipment once, the first form stays planned once per connection.)
      ctes.push(
        `ir AS (SELECT kind, id, site, ${TS} AS ts, rec, job, n
          FROM unnest(${unnest.join(', ')}) WITH ORDINALITY AS u(kind, id, site, t, rec, job, n))`,
        `cr AS (SELECT c.* FROM (SELECT DISTINCT kind, id FROM ir ORDER BY kind, id) k
          CROSS JOIN LATERAL (SELECT equipment_kind AS kind, equipment_id AS id, ts, record FROM current_readings
            WHERE equipment_kind = k.kind AND equipment_id = k.id FOR UPDATE) c)`,
        // Every row with whether it is at the newest time so far (only those can be stored), and
        // whether its equipment has a current row (n = 0).
        `sq AS (SELECT *, ts >= max(ts) OVER (PARTITION BY kind, id ORDER BY n) AS newest,
            bool_or(n = 0) OVER (PARTITION BY kind, id) AS existed
          FROM (SELECT kind, id, 0::bigint AS n, ts, record, NULL::int AS site, NULL::int AS job, NULL::text AS rec FROM cr
            UNION ALL SELECT kind, id, n, ts, rec::jsonb, site, job, rec FROM ir) x)`,
        `sr AS (SELECT kind, id, n, ts, site, job, rec, existed FROM (
            SELECT *, lag(n) OVER w IS NULL OR ts > lag(ts) OVER w OR record IS DISTINCT FROM lag(record) OVER w AS stored
            FROM sq WHERE newest WINDOW w AS (PARTITION BY kind, id ORDER BY n)) x
          WHERE stored AND n > 0)`,
        `fr AS (SELECT DISTINCT ON (kind, id) kind, id, site, ts, rec, existed FROM sr ORDER BY kind, id, n DESC)`,
        `wr AS (${INSERT_CURRENT}
          SELECT kind, id, site, ts, rec::jsonb FROM fr WHERE existed ORDER BY kind, id
          ${REPLACE_CURRENT})`,
        `wn AS (${INSERT_CURRENT}
          SELECT kind, id, site, ts, rec::jsonb FROM fr WHERE NOT existed ORDER BY kind, id)`,
        READING_EVENTS_IN_ORDER,
      );
      counted.push(`SELECT job, kind FROM sr`);
    }
  }

  if (sites?.length) {
    // LastCommunication is when the service received the upload (the clock of this transaction), to
    // the second: a site's row is written at most once a second, and never waited for. At a busy site
    // every statement would otherwise update the same row, and each would wait for the one before to
    // commit (a row lock held through its commit): writes of one site in a line behind the slowest.
    // A row another statement is writing right now is skipped: that one stores a time as recent.
    // The rows are found by key as an array (= ANY), not joined: the statement is planned once per
    // connection, and for that plan a join with `sites` could be a scan of the whole table.
    ctes.push(
      `ws AS (UPDATE sites SET last_communication = now()
        WHERE site_id = ANY(ARRAY(SELECT site_id FROM sites WHERE site_id = ANY(${p(sites, 'int4[]')})
          AND (last_communication IS NULL OR last_communication < now() - interval '1 second')
          ORDER BY site_id FOR UPDATE SKIP LOCKED)) RETURNING 1)`,
    );
  }
  // In insert mode a log job stores all its entries; the query counts what the upserts stored, per
  // job and kind (a generic upload mixes kinds; the ingest metrics count per kind).
  if (!counted.length) counted.push('SELECT NULL::int AS job, NULL::text AS kind WHERE false');
  const sql = `WITH ${ctes.join(',\n')}
SELECT job, kind, count(*)::int AS n FROM (${counted.join(' UNION ALL ')}) x GROUP BY job, kind`;
  return { sql, params };
}
