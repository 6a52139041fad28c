import { EQUIPMENT, TELEMETRY_KINDS, type EquipmentKind } from '../equipment.js';
import { boundEquipment } from '../provisioning/sparkplug.js';
import type { Queryable } from '../db/index.js';
import type { Access } from '../auth/access.js';
import { HttpError } from '../errors.js';
import type { ProvisioningDocument, SitedIn } from '../provisioning/document.js';
import { authorizeAlarmRules } from './import-access-rules.js';

// Who may import what of a provisioning document. An admin of every site may import anything;
// one whose sites are a list may import only records of those sites (new ones, and existing ones
// that are there now: an upsert must not move another site's record into its own), no companies
// (they span sites), and clients only as the admin routes allow (within its own sites and cameras).

/** The lists of the document whose records carry SiteID. */
type SitedList = {
  [K in keyof ProvisioningDocument]-?: NonNullable<
    ProvisioningDocument[K]
  > extends readonly SitedIn[]
    ? K
    : never;
}[keyof ProvisioningDocument];

/** Lists whose records carry SiteID, with the table and key that tell where an existing record is now. */
const equipmentList = (kind: EquipmentKind) => ({
  list: EQUIPMENT[kind].list as SitedList,
  table: EQUIPMENT[kind].table,
  key: EQUIPMENT[kind].idColumn,
  field: EQUIPMENT[kind].listIdField,
  type: 'int' as const,
});
const SITE_LISTS: readonly (Place & { list: SitedList; field: string })[] = [
  { list: 'sites', table: 'sites', key: 'site_id', field: 'SiteID', type: 'int' },
  ...(['device', 'sensor', 'meter', 'pump', 'tank', 'actuator', 'camera'] as const).map(
    equipmentList,
  ),
  {
    list: 'transactions',
    table: 'transactions',
    key: 'transaction_id',
    field: 'TransactionID',
    type: 'int',
  },
  { list: 'images', table: 'images', key: 'uuid', field: 'UUID', type: 'uuid' },
];

const refuse = (path: string) =>
  new HttpError(403, 'no access to one or more of the sites this document touches', [
    { path, message: 'outside the sites of this administrator' },
  ]);

/** A table holding records of a site, its key column and that column's type. */
interface Place {
  table: string;
  key: string;
  type: 'int' | 'bigint' | 'uuid';
}
const DEVICES: Place = { table: 'modbus_devices', key: 'device_id', type: 'int' };
const REGISTERS: Place = { table: 'registers', key: 'register_id', type: 'bigint' };
const CAMERAS: Place = { table: 'cameras', key: 'camera_id', type: 'int' };

/** Where the records of the document with these ids are now: id (as text, lower case) -> site. */
async function sitesNow(
  db: Queryable,
  { table, key, type }: Place,
  ids: unknown[],
): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const rows = await db.query<{ id: string; site: number }>(
    `SELECT ${key}::text AS id, site_id AS site FROM ${table} WHERE ${key} = ANY($1::${type}[])`,
    [ids.map((v) => String(v).toLowerCase())],
  );
  return new Map(rows.map((r) => [r.id, r.site]));
}

/** 403 (as a whole, naming the first record in the way) unless the actor may import every record of the document. */
export async function authorizeDocument(
  db: Queryable,
  doc: ProvisioningDocument,
  actor: Access,
): Promise<void> {
  const clients = doc.clients ?? [];
  // As over PATCH: a document cannot take the importing admin's own admin right or role full away
  // (a client record left without them means admin false, role full).
  clients.forEach((c, i) => {
    if (c.clientId === actor.client.clientId && (c.admin !== true || (c.role ?? 'full') !== 'full'))
      throw new HttpError(
        403,
        'an admin cannot give up its own admin right or role full; another admin or the CLI can',
        [
          {
            path: `/clients/${i}`,
            message: 'the importing admin itself, without admin or role full',
          },
        ],
      );
  });
  const star = (v: number[] | '*' | undefined) => (v === '*' ? null : (v ?? []));
  clients.forEach((c, i) => {
    if (!actor.covers({ siteIds: star(c.siteIds), cameraIds: star(c.cameraIds) }))
      throw refuse(`/clients/${i}`);
  });
  if (clients.length) {
    const existing = await db.query<{
      id: string;
      siteIds: number[] | null;
      cameraIds: number[] | null;
    }>(
      `SELECT client_id AS id, site_ids AS "siteIds", camera_ids AS "cameraIds" FROM clients WHERE client_id = ANY($1::text[])`,
      [clients.map((c) => c.clientId)],
    );
    const byId = new Map(existing.map((c) => [c.id, c]));
    clients.forEach((c, i) => {
      const now = byId.get(c.clientId);
      if (now && !actor.covers(now)) throw refuse(`/clients/${i}/clientId`);
    });
  }
  if (actor.siteIds === null) return;

  if (doc.companies?.length) throw refuse('/companies');
  for (const place of SITE_LISTS) {
    const { list, field } = place;
    const records: readonly SitedIn[] = doc[list] ?? [];
    records.forEach((r, i) => {
      if (!actor.canReachSite(r.SiteID)) throw refuse(`/${list}/${i}/SiteID`);
    });
    const now = await sitesNow(
      db,
      place,
      records.map((r) => r[field]),
    );
    records.forEach((r, i) => {
      const site = now.get(String(r[field]).toLowerCase());
      if (site !== undefined && !actor.canReachSite(site)) throw refuse(`/${list}/${i}/${field}`);
    });
  }
  // Cameras handed to clients must be at the actor's sites too.
  const camerasInDoc = new Map((doc.cameras ?? []).map((c) => [String(c.CameraID), c.SiteID]));
  const granted = clients.map((c) => (Array.isArray(c.cameraIds) ? c.cameraIds : []));
  const camerasNow = await sitesNow(db, CAMERAS, granted.flat());
  granted.forEach((ids, i) =>
    ids.forEach((id, j) => {
      const site = camerasInDoc.get(String(id)) ?? camerasNow.get(String(id));
      if (site !== undefined && !actor.canReachSite(site))
        throw refuse(`/clients/${i}/cameraIds/${j}`);
    }),
  );
  // A register's site is its Modbus device's (in the document, checked above, or in the database);
  // an existing register must be at one of the actor's sites as well.
  const registers = doc.registers ?? [];
  const devicesInDoc = new Map(
    (doc.modbusDevices ?? []).map((d) => [String(d.SiteModbusInOutDeviceID), d.SiteID]),
  );
  const devicesNow = await sitesNow(
    db,
    DEVICES,
    registers.map((r) => r.SiteModbusInOutDeviceID),
  );
  const registersNow = await sitesNow(
    db,
    REGISTERS,
    registers.map((r) => r.SiteIODeviceRegisterID),
  );
  await authorizeBindings(db, doc, actor);
  await authorizeAlarmRules(db, doc, actor);
  // Channels and policies are the service's, not a site's: only an admin of every site sets them.
  if (actor.siteIds !== null)
    for (const list of ['notificationChannels', 'notificationPolicies'] as const)
      if (doc[list]?.length) throw refuse(`/${list}/0`);
  registers.forEach((r, i) => {
    const device = String(r.SiteModbusInOutDeviceID);
    const site = devicesInDoc.get(device) ?? devicesNow.get(device);
    if (site !== undefined && !actor.canReachSite(site))
      throw refuse(`/registers/${i}/SiteModbusInOutDeviceID`);
    const was = registersNow.get(String(r.SiteIODeviceRegisterID));
    if (was !== undefined && !actor.canReachSite(was))
      throw refuse(`/registers/${i}/SiteIODeviceRegisterID`);
  });
}

/**
 * A Sparkplug binding is of its equipment's site: that equipment (in the document, or where it is
 * now) must be at one of the actor's sites, and so must the equipment a binding it replaces names.
 */
async function authorizeBindings(
  db: Queryable,
  doc: ProvisioningDocument,
  actor: Access,
): Promise<void> {
  const bindings = doc.sparkplugMetrics ?? [];
  if (!bindings.length) return;
  const named = bindings.map((b, i) => {
    try {
      return boundEquipment(b, `sparkplugMetrics[${i}]`);
    } catch {
      return undefined; // the import names it (400)
    }
  });
  for (const kind of TELEMETRY_KINDS) {
    const { list, listIdField, table, idColumn } = EQUIPMENT[kind];
    const inDoc = new Map(
      ((doc[list as SitedList] ?? []) as readonly SitedIn[]).map((r) => [
        String(r[listIdField]),
        r.SiteID,
      ]),
    );
    const ids = named.filter((n) => n?.kind === kind).map((n) => n!.id);
    const now = await sitesNow(db, { table, key: idColumn, type: 'int' }, ids);
    named.forEach((n, i) => {
      if (n?.kind !== kind) return;
      const site = inDoc.get(String(n.id)) ?? now.get(String(n.id));
      if (site !== undefined && !actor.canReachSite(site))
        throw refuse(`/sparkplugMetrics/${i}/${n.idField}`);
    });
  }
  const replaced = await db.query<{ i: number; site: number | null }>(
    `SELECT u.i, coalesce(s.site_id, m.site_id, p.site_id, t.site_id) AS site
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS u(g, n, d, m, i)
       JOIN sparkplug_metrics b ON (b.group_id, b.edge_node_id, b.device_id, b.metric_name) = (u.g, u.n, u.d, u.m)
       LEFT JOIN sensors s ON b.kind = 'sensor' AND s.sensor_id = b.equipment_id
       LEFT JOIN flow_meters m ON b.kind = 'meter' AND m.meter_id = b.equipment_id
       LEFT JOIN pumps p ON b.kind = 'pump' AND p.pump_id = b.equipment_id
       LEFT JOIN tank_groups t ON b.kind = 'tank' AND t.tank_group_id = b.equipment_id`,
    [
      bindings.map((b) => b.GroupID),
      bindings.map((b) => b.EdgeNodeID),
      bindings.map((b) => b.DeviceID ?? ''),
      bindings.map((b) => b.MetricName),
    ],
  );
  for (const r of replaced)
    if (r.site !== null && !actor.canReachSite(r.site))
      throw refuse(`/sparkplugMetrics/${Number(r.i) - 1}/MetricName`);
}
