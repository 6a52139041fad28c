import type { Queryable } from '../db/index.js';
import { toIso } from '../time.js';

// The sites engine: the list of sites a client may see, filtered, ordered and paged, and what the
// additional view adds to a page (last communication, active alarm count, current values).

/** The columns a list may be ordered by, keyed by the lower-case name a request gives. */
export const SORT_COLUMNS = {
  platformcompanyid: 's.company_id',
  projectid: 's.project_id',
  name: 'lower(s.name)',
} as const;
export type SortKey = keyof typeof SORT_COLUMNS;

/** Current values of a site's equipment: the latest reading record of each, as uploaded. */
export interface CurrentValues {
  sensors: object[];
  meters: object[];
  pumps: object[];
  tankGroups: object[];
}

export interface Site {
  SiteID: number;
  Name: string;
  CompanyID: number;
  CompanyName: string;
  ProjectID: number | null;
  Active: boolean;
  Latitude: number | null;
  Longitude: number | null;
  TimeZone: string | null;
  CommLossMinutes: number;
  LastCommunication?: string | null;
  ActiveAlarmCount?: number;
  Current?: CurrentValues;
}

export interface SiteFilter {
  /** null: every site. */
  siteIds: number[] | null;
  name?: string;
  active?: boolean;
  companyId?: number;
}

export interface SiteOrder {
  by?: SortKey;
  direction: 'asc' | 'desc';
}

const WHERE = `($1::int[] IS NULL OR s.site_id = ANY($1::int[]))
  AND ($2::text IS NULL OR strpos(lower(s.name), lower($2::text)) > 0)
  AND ($3::boolean IS NULL OR s.active = $3::boolean)
  AND ($4::int IS NULL OR s.company_id = $4::int)`;

const filterParams = (f: SiteFilter) => [
  f.siteIds,
  f.name ?? null,
  f.active ?? null,
  f.companyId ?? null,
];

export async function countSites(db: Queryable, f: SiteFilter): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM sites s WHERE ${WHERE}`,
    filterParams(f),
  );
  return row.n;
}

export async function listSites(
  db: Queryable,
  f: SiteFilter,
  order: SiteOrder,
  limit: number,
  offset: number,
): Promise<Site[]> {
  // The column comes from a fixed map and the direction from a two-word choice, never from the request text.
  const dir = order.direction === 'desc' ? 'DESC' : 'ASC';
  const orderBy = order.by
    ? `${SORT_COLUMNS[order.by]} ${dir} NULLS LAST, s.site_id ASC`
    : `s.site_id ${dir}`;
  return db.query<Site>(
    `SELECT s.site_id AS "SiteID", s.name AS "Name", s.company_id AS "CompanyID", c.name AS "CompanyName",
            s.project_id AS "ProjectID", s.active AS "Active", s.latitude AS "Latitude", s.longitude AS "Longitude",
            s.time_zone AS "TimeZone", COALESCE(s.comm_loss_minutes, 60) AS "CommLossMinutes",
            s.last_communication AS "LastCommunication"
       FROM sites s JOIN companies c ON c.company_id = s.company_id
      WHERE ${WHERE}
      ORDER BY ${orderBy}
      LIMIT $5 OFFSET $6`,
    [...filterParams(f), limit, offset],
  );
}

const CURRENT_KEYS: Record<string, keyof CurrentValues> = {
  sensor: 'sensors',
  meter: 'meters',
  pump: 'pumps',
  tank: 'tankGroups',
};

/** Adds LastCommunication, ActiveAlarmCount and Current to a page of sites, in two queries whatever its size. */
export async function addSiteTelemetry(db: Queryable, sites: Site[]): Promise<Site[]> {
  const ids = sites.map((s) => s.SiteID);
  const [alarms, readings] = await Promise.all([
    db.query<{ site_id: number; n: number }>(
      `SELECT site_id, count(*)::int AS n FROM site_alarms WHERE resolved_at IS NULL AND site_id = ANY($1::int[]) GROUP BY site_id`,
      [ids],
    ),
    db.query<{ site_id: number; equipment_kind: string; record: object }>(
      `SELECT site_id, equipment_kind, record FROM current_readings WHERE site_id = ANY($1::int[]) ORDER BY equipment_kind, equipment_id`,
      [ids],
    ),
  ]);
  const alarmCount = new Map(alarms.map((a) => [a.site_id, a.n]));
  const current = new Map<number, CurrentValues>(
    ids.map((id) => [id, { sensors: [], meters: [], pumps: [], tankGroups: [] }]),
  );
  for (const r of readings) current.get(r.site_id)?.[CURRENT_KEYS[r.equipment_kind]].push(r.record);
  return sites.map((s) => ({
    ...s,
    LastCommunication: toIso(s.LastCommunication as unknown as Date | null),
    ActiveAlarmCount: alarmCount.get(s.SiteID) ?? 0,
    Current: current.get(s.SiteID)!,
  }));
}
