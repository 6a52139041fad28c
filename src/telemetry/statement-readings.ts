import { INSERT_EVENTS } from '../stream/publish.js';
import { equipmentKey } from './kinds.js';
import type { Job } from './jobs.js';
import { TS, type StatementBuilder } from './statement-builder.js';

// The readings part of the upload statement: the upsert of the current values (current_readings)
// and the live stream's `reading` events. A reading replaces the current value unless it is older;
// at the same time, only if it differs.

/** A current value written whole (`t` is the row already there, when an upsert meets one). */
const INSERT_CURRENT =
  'INSERT INTO current_readings AS t (equipment_kind, equipment_id, site_id, ts, record)';
const REPLACE_CURRENT =
  'ON CONFLICT (equipment_kind, equipment_id) DO UPDATE SET site_id = EXCLUDED.site_id, ts = EXCLUDED.ts, record = EXCLUDED.record';

/** A `reading` event for each row of `rows` (a reading that replaced a current value), in `order`. */
const readingEvents = (rows: string, order: string, of = '') => `er AS (${INSERT_EVENTS}
  SELECT ${of}site, 'reading', '{"siteId":' || ${of}site || ',"kind":"' || ${of}kind || '","record":' || ${of}rec || '}'
    FROM ${rows} ORDER BY ${order})`;

/**
 * A `reading` event for each reading that replaced a current value: each row the upsert `wr`
 * returned, with its input row of `ir`.
 */
const READING_EVENTS = readingEvents('wr JOIN ir USING (kind, id)', 'ir.kind, ir.id', 'ir.');

/**
 * The same when a statement takes several readings of one equipment in order: an event for each
 * reading that replaced a current value (the rows of `sr`), each equipment's in that order.
 */
const READING_EVENTS_IN_ORDER = readingEvents('sr', 'kind, id, n');

/** The readings of the jobs, in one of two forms: each equipment once, or some several times. */
export function addReadings(b: StatementBuilder, jobs: Job[]): void {
  const readings = jobs.flatMap((job, j) =>
    job.role === 'reading' ? job.entries.map((e) => ({ e, j })) : [],
  );
  if (!readings.length) return;
  const column = (type: string, of: (r: (typeof readings)[number]) => unknown) =>
    b.param(readings.map(of), type);
  const unnest = [
    column('text[]', (r) => r.e.kind),
    column('int4[]', (r) => r.e.id),
    column('int4[]', (r) => r.e.site),
    column('float8[]', (r) => r.e.ts),
    column('text[]', (r) => JSON.stringify(r.e.record)),
    column('int4[]', (r) => r.j),
  ].join(', ');
  const seen = new Set<number>();
  const repeats = readings.some(({ e }) => {
    const key = equipmentKey(e.kind, e.id);
    return seen.size === seen.add(key).size;
  });
  if (repeats) addReadingsInOrder(b, unnest);
  else addReadingsOnce(b, unnest);
}

/** Each equipment once: one upsert decides, and returns the rows it wrote. */
function addReadingsOnce(b: StatementBuilder, unnest: string): void {
  b.ctes.push(
    `ir AS (SELECT kind, id, site, ${TS} AS ts, rec, job FROM unnest(${unnest}) AS u(kind, id, site, t, rec, job))`,
    `wr AS (${INSERT_CURRENT}
          SELECT kind, id, site, ts, rec::jsonb FROM ir ORDER BY kind, id
          ${REPLACE_CURRENT}
          WHERE t.ts < EXCLUDED.ts OR (t.ts = EXCLUDED.ts AND t.record IS DISTINCT FROM EXCLUDED.record)
          RETURNING t.equipment_kind AS kind, t.equipment_id AS id)`,
    READING_EVENTS,
  );
  b.counted.push(`SELECT ir.job, ir.kind FROM wr JOIN ir USING (kind, id)`);
}

/**
 * Readings of one equipment several times (a busy site's gateway sends each sensor again within
 * milliseconds): taken in order (n, the group's order) as if one after another, in this one
 * statement. The current rows are locked first, in key order, and read as committed (FOR UPDATE
 * reads the newest version); each reading is compared with the state before it (the newest earlier
 * time, and the record of the last reading at that time), and only each equipment's last stored
 * reading is written. Equipment with no current row yet is written with a plain INSERT: should a
 * concurrent statement have written its first row meanwhile, this one fails (unique violation,
 * nothing written) and the writer repeats it. (A form of its own: its per-equipment lookups make
 * the planner's generic plan look costly, and each equipment once, the first form stays planned
 * once per connection.)
 */
function addReadingsInOrder(b: StatementBuilder, unnest: string): void {
  b.ctes.push(
    `ir AS (SELECT kind, id, site, ${TS} AS ts, rec, job, n
          FROM unnest(${unnest}) WITH ORDINALITY AS u(kind, id, site, t, rec, job, n))`,
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
  b.counted.push(`SELECT job, kind FROM sr`);
}
