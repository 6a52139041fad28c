import type { Queryable } from '../db/index.js';
import type { ProvisioningDocument } from './document.js';

// The import's trace of link changes (table config_link_changes), read by the configuration
// /updates paths. The links a configuration response lists are taken before and after the import's
// writes, and every one added, removed or listed differently gets the import's stamp. Comparing
// what the responses list, rather than the rows written, catches every way a link can change: a
// register moved between sensors, a role re-pointed or dropped, a sensor attached to other
// equipment, a meter's SiteSensorID changed. It follows src/config/assemble.ts: an equipment's
// sensor registers are those of the site's sensors attached to it, by sensor id, then position.

interface Link {
  site: number;
  kind: string;
  id: number;
  role: string | null;
  register: string | null;
  /**
   * How the response lists it: a list's register by its place (sensor and position), a role by its
   * register and the sensor that register shows as ConnectionSensorID. A role map is a JSON object,
   * so the order of its roles is not compared.
   */
  how: string;
}

/** Every link of the given sites, keyed by what identifies it in a response. */
export type Links = Map<string, Link>;

const LINKS_SQL = `
  SELECT sr.site_id AS site, 'sensor' AS kind, sr.sensor_id AS id, NULL::text AS role, sr.register_id::text AS register, sr.position::text AS how
    FROM sensor_registers sr WHERE sr.site_id = ANY($1::int[])
  UNION ALL
  SELECT ro.site_id, ro.equipment_kind, ro.equipment_id, ro.role, NULL, concat_ws('/', ro.register_id, sr.sensor_id)
    FROM equipment_register_roles ro LEFT JOIN sensor_registers sr ON sr.register_id = ro.register_id
   WHERE ro.site_id = ANY($1::int[])
  UNION ALL
  SELECT s.site_id, CASE s.equipment_type_id WHEN 1 THEN 'meter' WHEN 2 THEN 'pump' ELSE 'tank' END, s.equipment_id::int, NULL,
         sr.register_id::text, concat_ws('/', s.sensor_id, sr.position)
    FROM sensors s JOIN sensor_registers sr ON sr.sensor_id = s.sensor_id
   WHERE s.site_id = ANY($1::int[]) AND s.equipment_type_id IN (1, 2, 3) AND s.equipment_id BETWEEN 1 AND 2147483647
  UNION ALL
  SELECT m.site_id, 'meter', m.meter_id, NULL, sr.register_id::text, concat_ws('/', s.sensor_id, sr.position)
    FROM flow_meters m JOIN sensors s ON s.sensor_id = m.site_sensor_id AND s.site_id = m.site_id
    JOIN sensor_registers sr ON sr.sensor_id = s.sensor_id
   WHERE m.site_id = ANY($1::int[])`;

const EQUIPMENT = [
  { list: 'sensors', id: 'SiteSensorID', table: 'sensors', column: 'sensor_id' },
  { list: 'flowMeters', id: 'SiteFlowMeterID', table: 'flow_meters', column: 'meter_id' },
  { list: 'pumps', id: 'SitePumpID', table: 'pumps', column: 'pump_id' },
  { list: 'tankGroups', id: 'SiteTankGroupID', table: 'tank_groups', column: 'tank_group_id' },
] as const;

/** The sites whose links an import may change: those its equipment names, and those that equipment is at now. */
export async function linkedSites(db: Queryable, doc: ProvisioningDocument): Promise<number[]> {
  const sites = new Set<number>();
  const ids = EQUIPMENT.map((e) =>
    (doc[e.list] ?? []).map((r) => (sites.add(r.SiteID), r[e.id] as number)),
  );
  if (!ids.some((list) => list.length)) return [];
  const sql = EQUIPMENT.map(
    (e, i) => `SELECT site_id FROM ${e.table} WHERE ${e.column} = ANY($${i + 1}::int[])`,
  ).join(' UNION ');
  for (const r of await db.query<{ site_id: number }>(sql, ids)) sites.add(r.site_id);
  return [...sites];
}

export async function readLinks(db: Queryable, siteIds: number[]): Promise<Links> {
  const links: Links = new Map();
  if (!siteIds.length) return links;
  for (const l of await db.query<Link>(LINKS_SQL, [siteIds]))
    links.set(JSON.stringify([l.kind, l.id, l.role, l.register]), l);
  return links;
}

/** Stamps every link that differs between before and after; returns how many. */
export async function recordLinkChanges(
  db: Queryable,
  before: Links,
  after: Links,
  stamp: Date,
): Promise<number> {
  const changed: Link[] = [];
  for (const [key, l] of after) if (before.get(key)?.how !== l.how) changed.push(l);
  for (const [key, l] of before) if (!after.has(key)) changed.push(l);
  for (let i = 0; i < changed.length; i += CHUNK) {
    await db.query(
      `INSERT INTO config_link_changes (site_id, equipment_kind, equipment_id, role, register_id, changed_at)
       SELECT x.site, x.kind, x.id, x.role, x.register::bigint, $2::timestamptz
         FROM jsonb_to_recordset($1::jsonb) AS x(site int, kind text, id int, role text, register text)
       ON CONFLICT (equipment_kind, equipment_id, role, register_id) DO UPDATE SET changed_at = EXCLUDED.changed_at, site_id = EXCLUDED.site_id`,
      [JSON.stringify(changed.slice(i, i + CHUNK)), stamp.toISOString()],
    );
  }
  return changed.length;
}

const CHUNK = 10_000;
