import type { Queryable } from '../db/index.js';
import type { Job } from '../telemetry/jobs.js';
import type { TelemetryKind } from '../telemetry/kinds.js';
import { isoSql } from '../time.js';

// How writers publish events: as rows of stream_events written by the very statement or
// transaction that stores the data, so an event exists exactly when its data is committed (and
// never for a write that failed). These are the SQL pieces the writers add to their statements.

/** The NOTIFY channel of this database schema (instances LISTEN to it; tests run one schema per suite). */
export const CHANNEL_SQL = `'stream_' || current_schema()`;

const INSERT = 'INSERT INTO stream_events (site_id, type, data)';

/** A `reading` event for each row of `rows` (a reading that replaced a current value), in `order`. */
const readingEvents = (rows: string, order: string, of = '') => `er AS (${INSERT}
  SELECT ${of}site, 'reading', '{"siteId":' || ${of}site || ',"kind":"' || ${of}kind || '","record":' || ${of}rec || '}'
    FROM ${rows} ORDER BY ${order})`;

/**
 * CTE of the telemetry statement (src/telemetry/statement.ts): a `reading` event for each reading
 * that replaced a current value, i.e. each row the upsert `wr` returned, with its input row of `ir`.
 */
export const READING_EVENTS = readingEvents('wr JOIN ir USING (kind, id)', 'ir.kind, ir.id', 'ir.');

/**
 * The same when a statement takes several readings of one equipment in order: an event for each
 * reading that replaced a current value (the rows of `sr`), each equipment's in that order.
 */
export const READING_EVENTS_IN_ORDER = readingEvents('sr', 'kind, id, n');

/**
 * CTE of the telemetry statement when it upserts: a `logs` event per upload (job), site and kind,
 * over the log rows it stored (`stored` yields id, ts, job and site).
 */
export const logEvents = (
  name: string,
  kind: TelemetryKind,
  stored: string,
) => `${name} AS (${INSERT}
  SELECT site, 'logs', json_build_object('siteId', site, 'kind', '${kind}', 'ids', array_agg(DISTINCT id ORDER BY id),
         'from', ${isoSql('min(ts)')}, 'to', ${isoSql('max(ts)')}, 'count', count(*))::text
    FROM ${stored} GROUP BY job, site ORDER BY job, site)`;

interface LogGroup {
  site: number;
  kind: TelemetryKind;
  ids: Set<number>;
  from: number;
  to: number;
  count: number;
}

/**
 * The `logs` events of a telemetry statement that writes logs with a plain INSERT, where every entry
 * is stored or none: made here, the same as logEvents makes them, and stored by the CTE it returns.
 */
export function insertedLogEvents(jobs: Job[]) {
  const sites: number[] = [];
  const data: string[] = [];
  for (const job of jobs) {
    if (job.role !== 'log') continue;
    // By kind, then site (number keys: a 1,000-record batch builds no key strings); `made` keeps
    // the order in which each kind and site first appeared.
    const made: LogGroup[] = [];
    const groups = new Map<TelemetryKind, Map<number, LogGroup>>();
    for (const e of job.entries) {
      let bySite = groups.get(e.kind);
      if (!bySite) groups.set(e.kind, (bySite = new Map()));
      const g = bySite.get(e.site!);
      if (!g) {
        const group = {
          site: e.site!,
          kind: e.kind,
          ids: new Set([e.id]),
          from: e.ts,
          to: e.ts,
          count: 1,
        };
        bySite.set(e.site!, group);
        made.push(group);
      } else {
        g.ids.add(e.id);
        g.from = Math.min(g.from, e.ts);
        g.to = Math.max(g.to, e.ts);
        g.count++;
      }
    }
    for (const g of made.sort((a, b) => a.site - b.site)) {
      sites.push(g.site);
      const ids = [...g.ids].sort((a, b) => a - b);
      data.push(
        JSON.stringify({
          siteId: g.site,
          kind: g.kind,
          ids,
          from: new Date(g.from).toISOString(),
          to: new Date(g.to).toISOString(),
          count: g.count,
        }),
      );
    }
  }
  return {
    sites,
    data,
    cte: (siteList: string, dataList: string) =>
      `el AS (${INSERT} SELECT site, 'logs', data FROM unnest(${siteList}, ${dataList}) AS u(site, data))`,
  };
}

/**
 * Wraps an alarm statement that RETURNs alarm records (src/alarms/record.ts RECORD_COLUMNS) so that
 * it also stores an `alarm` event per returned row, with `status` (an SQL expression over those
 * columns), and wakes the other instances when it commits. It returns what the statement returned.
 */
export const withAlarmEvents = (
  statement: string,
  status: string,
) => `WITH changed AS (${statement}),
ev AS (${INSERT}
  SELECT "SiteID", 'alarm', json_build_object('status', ${status}, 'alarm', row_to_json(changed))::text
    FROM changed ORDER BY "SiteAlarmLogID"),
wake AS (SELECT pg_notify(${CHANNEL_SQL}, '') WHERE EXISTS (SELECT 1 FROM changed))
SELECT changed.* FROM changed LEFT JOIN wake ON true`;

/** Configuration tables whose rows an import stamps with its time when it changes them. */
const CONFIG_TABLES = [
  'sites',
  'modbus_devices',
  'registers',
  'sensors',
  'flow_meters',
  'pumps',
  'tank_groups',
  'actuators',
];

/**
 * Inside an import's transaction, after its writes: a `config` event for each site with a record
 * stamped by this import, and for `alsoSites` (changes the stamps do not show). Returns the sites.
 */
export async function publishConfigChanges(
  tx: Queryable,
  stamp: Date,
  alsoSites: number[],
): Promise<number[]> {
  const changed = CONFIG_TABLES.map((t) => `SELECT site_id FROM ${t} WHERE updated_at = $1`).join(
    ' UNION ',
  );
  const rows = await tx.query<{ site_id: number }>(
    `WITH s AS (${changed} UNION SELECT unnest($2::int[])),
     ev AS (${INSERT} SELECT site_id, 'config', json_build_object('siteId', site_id)::text FROM s ORDER BY site_id RETURNING site_id),
     wake AS (SELECT pg_notify(${CHANNEL_SQL}, '') WHERE EXISTS (SELECT 1 FROM ev))
     SELECT ev.site_id FROM ev LEFT JOIN wake ON true ORDER BY 1`,
    [stamp.toISOString(), alsoSites],
  );
  return rows.map((r) => r.site_id);
}

/** A Sparkplug edge node (deviceId null) or device that went online (birth) or offline (death). */
export interface EdgeEvent {
  siteId: number;
  groupId: string;
  edgeNodeId: string;
  deviceId: string | null;
  online: boolean;
}

/** Stores `edge` events (one per site concerned) in their own statement, and wakes the other instances. */
export async function publishEdgeEvents(db: Queryable, events: EdgeEvent[]): Promise<void> {
  if (!events.length) return;
  await db.query(
    `WITH ev AS (${INSERT} SELECT site, 'edge', data FROM unnest($1::int[], $2::text[]) AS u(site, data) RETURNING 1),
     wake AS (SELECT pg_notify(${CHANNEL_SQL}, '') WHERE EXISTS (SELECT 1 FROM ev))
     SELECT count(*)::int AS n FROM ev LEFT JOIN wake ON true`,
    [
      events.map((e) => e.siteId),
      events.map((e) =>
        JSON.stringify({
          siteId: e.siteId,
          groupId: e.groupId,
          edgeNodeId: e.edgeNodeId,
          deviceId: e.deviceId,
          online: e.online,
        }),
      ),
    ],
  );
}
