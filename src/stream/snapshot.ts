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
    const sites = rows.map((s) => ({
      SiteID: s.SiteID,
      LastCommunication: s.LastCommunication ?? null,
      Current: s.Current,
      ActiveAlarms: alarms.get(s.SiteID) ?? [],
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
