import type { Queryable } from '../db/index.js';

// How writers publish events: as rows of stream_events written by the very statement or
// transaction that stores the data, so an event exists exactly when its data is committed (and
// never for a write that failed). These are the SQL pieces the writers add to their statements;
// a writer that builds its own events (the uploads do) starts from INSERT_EVENTS.

/** The NOTIFY channel of this database schema (instances LISTEN to it; tests run one schema per suite). */
export const CHANNEL_SQL = `'stream_' || current_schema()`;

/**
 * The head of an INSERT of events: rows of (site, type, data), data being the event's JSON as the
 * subscribers receive it. Writers that publish events from their own statements start with it.
 */
export const INSERT_EVENTS = 'INSERT INTO stream_events (site_id, type, data)';

/**
 * Wraps an alarm statement that RETURNs alarm records (src/alarms/record.ts RECORD_COLUMNS) so that
 * it also stores an `alarm` event per returned row, with `status` (an SQL expression over those
 * columns), and wakes the other instances when it commits. It returns what the statement returned.
 */
export const withAlarmEvents = (
  statement: string,
  status: string,
  /** More CTEs over `changed` (the outcome an upload records, src/db/outcome.ts; the alarm journal, src/alarms/journal.ts). */
  more: string[] = [],
) => `WITH changed AS (${statement}),
ev AS (${INSERT_EVENTS}
  SELECT "SiteID", 'alarm', json_build_object('status', ${status}, 'alarm', row_to_json(changed))::text
    FROM changed ORDER BY "SiteAlarmLogID"),
${more.map((cte) => `${cte},\n`).join('')}wake AS (SELECT pg_notify(${CHANNEL_SQL}, '') WHERE EXISTS (SELECT 1 FROM changed))
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
     ev AS (${INSERT_EVENTS} SELECT site_id, 'config', json_build_object('siteId', site_id)::text FROM s ORDER BY site_id RETURNING site_id),
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

/**
 * Stores `edge` events (one per site concerned) and each node's or device's latest state per site
 * (edge_state, for the snapshot) in their own statement, and wakes the other instances. `since`
 * moves only when the state changes.
 */
export async function publishEdgeEvents(db: Queryable, events: EdgeEvent[]): Promise<void> {
  if (!events.length) return;
  await db.query(
    `WITH ev AS (${INSERT_EVENTS} SELECT site, 'edge', data FROM unnest($1::int[], $2::text[]) AS u(site, data) RETURNING 1),
     state AS (INSERT INTO edge_state AS s (site_id, group_id, edge_node_id, device_id, online, since)
       SELECT DISTINCT ON (site, g, n, d) site, g, n, d, o, now()
         FROM unnest($1::int[], $3::text[], $4::text[], $5::text[], $6::boolean[]) WITH ORDINALITY AS u(site, g, n, d, o, i)
        ORDER BY site, g, n, d, i DESC
       ON CONFLICT (site_id, group_id, edge_node_id, device_id) DO UPDATE
         SET online = EXCLUDED.online,
             since = CASE WHEN s.online = EXCLUDED.online THEN s.since ELSE EXCLUDED.since END
       RETURNING 1),
     wake AS (SELECT pg_notify(${CHANNEL_SQL}, '') WHERE EXISTS (SELECT 1 FROM ev))
     SELECT (SELECT count(*)::int FROM ev) AS n, (SELECT count(*)::int FROM state) AS states FROM (SELECT 1) one LEFT JOIN wake ON true`,
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
      events.map((e) => e.groupId),
      events.map((e) => e.edgeNodeId),
      events.map((e) => e.deviceId ?? ''),
      events.map((e) => e.online),
    ],
  );
}
