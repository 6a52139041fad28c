import type { Database, Queryable } from '../db/index.js';
import { RECORD_COLUMNS, toRecord, type AlarmRecord, type RecordRow } from '../alarms/record.js';
import { addSiteTelemetry, listSites } from '../sites/repository.js';
import { fromSnapshot, type Cursor } from './cursor.js';

// The first event of a stream: the state of the sites, read in one REPEATABLE READ transaction
// together with its snapshot, which is the stream's position: what follows is exactly what that
// snapshot did not see.

/** Active alarms per site in a snapshot, newest first (the active list's default bound). */
export const SNAPSHOT_ALARMS_PER_SITE = 1000;

export interface SiteState {
  SiteID: number;
  LastCommunication: string | null;
  Current: unknown;
  ActiveAlarms: AlarmRecord[];
  Edge: EdgeState[];
}

/** A Sparkplug edge node's (deviceId null) or device's latest state, as a site's snapshot carries it. */
export interface EdgeState {
  groupId: string;
  edgeNodeId: string;
  deviceId: string | null;
  online: boolean;
  since: string;
}

/** The sites' state (null: every site) and the cursor it corresponds to. */
export async function readSnapshot(
  db: Database,
  siteIds: number[] | null,
  maxSites: number,
): Promise<{ sites: SiteState[]; cursor: Cursor }> {
  return db.snapshot(async (tx) => {
    const [{ snap }] = await tx.query<{ snap: string }>(
      'SELECT pg_current_snapshot()::text AS snap',
    );
    const rows = await addSiteTelemetry(
      tx,
      await listSites(tx, { siteIds }, { direction: 'asc' }, maxSites, 0),
    );
    const alarms = await activeAlarmsBySite(
      tx,
      rows.map((s) => s.SiteID),
    );
    const edge = await edgeStateBySite(
      tx,
      rows.map((s) => s.SiteID),
    );
    const sites = rows.map((s) => ({
      SiteID: s.SiteID,
      LastCommunication: s.LastCommunication ?? null,
      Current: s.Current,
      ActiveAlarms: alarms.get(s.SiteID) ?? [],
      Edge: edge.get(s.SiteID) ?? [],
    }));
    return { sites, cursor: fromSnapshot(snap) };
  });
}

async function activeAlarmsBySite(
  db: Queryable,
  siteIds: number[],
): Promise<Map<number, AlarmRecord[]>> {
  const rows = await db.query<RecordRow>(
    `SELECT ${RECORD_COLUMNS} FROM (
       SELECT *, row_number() OVER (PARTITION BY site_id ORDER BY last_seen DESC, alarm_id DESC) AS n
         FROM site_alarms WHERE resolved_at IS NULL AND site_id = ANY($1::int[])) a
      WHERE n <= $2
      ORDER BY site_id, last_seen DESC, alarm_id DESC`,
    [siteIds, SNAPSHOT_ALARMS_PER_SITE],
  );
  const bySite = new Map<number, AlarmRecord[]>();
  for (const r of rows) {
    const list = bySite.get(r.SiteID);
    if (list) list.push(toRecord(r));
    else bySite.set(r.SiteID, [toRecord(r)]);
  }
  return bySite;
}

/** The edge nodes and devices of each site, nodes first, by group, node and device. */
async function edgeStateBySite(
  db: Queryable,
  siteIds: number[],
): Promise<Map<number, EdgeState[]>> {
  const rows = await db.query<{
    site_id: number;
    group_id: string;
    edge_node_id: string;
    device_id: string;
    online: boolean;
    since: string;
  }>(
    `SELECT site_id, group_id, edge_node_id, device_id, online,
            to_char(since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS since
       FROM edge_state WHERE site_id = ANY($1::int[])
      ORDER BY site_id, group_id, edge_node_id, device_id`,
    [siteIds],
  );
  const bySite = new Map<number, EdgeState[]>();
  for (const r of rows) {
    const state: EdgeState = {
      groupId: r.group_id,
      edgeNodeId: r.edge_node_id,
      deviceId: r.device_id === '' ? null : r.device_id,
      online: r.online,
      since: r.since,
    };
    const list = bySite.get(r.site_id);
    if (list) list.push(state);
    else bySite.set(r.site_id, [state]);
  }
  return bySite;
}
