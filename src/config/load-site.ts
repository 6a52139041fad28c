import { ATTACH_KINDS, EQUIPMENT, type AttachKind } from '../equipment.js';
import type { Queryable } from '../db/index.js';
import * as records from '../schemas/records.js';
import { selectList, type Field } from '../schemas/records.js';
import {
  ATTACHED_FIELDS,
  type ActuatorRecord,
  type ActuatorRows,
  type ConfigData,
  type Item,
  type SensorRecord,
} from './data.js';
import {
  groupRoles,
  isoTimes,
  items,
  LINK_CHANGES,
  REGISTER_SELECT,
  ROLES,
  timeFields,
  toLinkChange,
  toRegister,
  type LinkChangeRow,
  type RegisterSelectRow,
  type RoleRow,
} from './queries.js';

// A site's whole configuration: a fixed set of queries (one per table, whatever the site's size),
// and the fingerprint that tells whether any of it changed.

const DEVICE_TIMES = timeFields(records.MODBUS_DEVICE);
const ACTUATOR_TIMES = timeFields(records.ACTUATOR);

/**
 * Every table a site's configuration is read from (all carry site_id), but config_link_changes: the
 * import writes a row there only for a link whose rows it changed at that site in the same
 * transaction, so those tables tell the change already, and the fingerprint stays as cheap as it was.
 */
const CONFIG_TABLES = [
  'modbus_devices',
  'registers',
  'sensor_registers',
  'sensors',
  'flow_meters',
  'pumps',
  'tank_groups',
  'equipment_register_roles',
  'actuators',
  'actuator_sensor_scalings',
  'actuator_sensor_triggers',
  'actuator_tank_group_connections',
];

/**
 * A value that changes whenever anything a site's configuration is built from changes, in one
 * cheap query: per table the row count and the sum of the rows' xmin (every insert or update
 * writes a row version with a newer transaction id, so the sum grows), plus the site's own
 * configuration fields (not its LastCommunication, which uploads keep moving). Undefined: no such site.
 */
export async function siteFingerprint(db: Queryable, siteId: number): Promise<string | undefined> {
  const perTable = CONFIG_TABLES.map(
    (t) =>
      `(SELECT count(*) || '/' || coalesce(sum(xmin::text::bigint), 0) FROM ${t} WHERE site_id = $1)`,
  );
  const [row] = await db.query<{ fp: string }>(
    `SELECT concat_ws('|', row(${records.SITE.map((f) => `s.${f.column}`).join(', ')}, c.name)::text, ${perTable.join(', ')}) AS fp
       FROM sites s JOIN companies c ON c.company_id = s.company_id WHERE s.site_id = $1`,
    [siteId],
  );
  return row?.fp;
}

/** The site's meters, pumps and tank groups, a query per kind. */
async function loadAttached(db: Queryable, siteId: number): Promise<ConfigData['equipment']> {
  const ofKind = (k: AttachKind) =>
    items(db, ATTACHED_FIELDS[k], EQUIPMENT[k].table, EQUIPMENT[k].idColumn, 't.site_id = $1', [
      siteId,
    ]);
  const lists = await Promise.all(ATTACH_KINDS.map(ofKind));
  return Object.fromEntries(ATTACH_KINDS.map((k, i) => [k, lists[i]])) as Record<
    AttachKind,
    Item[]
  >;
}

/**
 * A site's whole configuration in thirteen queries, whatever its size (side by side on a pool, one
 * after another in a snapshot). `site` is undefined when there is no such site.
 */
export async function loadSite(db: Queryable, siteId: number): Promise<ConfigData> {
  const p = [siteId];
  const [[site], devices, registers, sensors, equipment, roles, actuators, links] =
    await Promise.all([
      db.query(
        `SELECT ${selectList(records.SITE, 's')}, c.name AS "CompanyName" FROM sites s JOIN companies c ON c.company_id = s.company_id WHERE s.site_id = $1`,
        p,
      ),
      items(
        db,
        records.MODBUS_DEVICE,
        'modbus_devices',
        'device_id',
        't.site_id = $1',
        p,
        DEVICE_TIMES,
      ),
      db.query<RegisterSelectRow>(
        `${REGISTER_SELECT} WHERE r.site_id = $1 ORDER BY r.register_id`,
        p,
      ),
      items<SensorRecord>(db, records.SENSOR, 'sensors', 'sensor_id', 't.site_id = $1', p),
      loadAttached(db, siteId),
      db.query<RoleRow>(
        `${ROLES} WHERE site_id = $1 ORDER BY equipment_kind, equipment_id, position`,
        p,
      ),
      loadActuators(db, siteId),
      db.query<LinkChangeRow>(`${LINK_CHANGES} WHERE site_id = $1`, p),
    ]);
  return {
    site,
    devices,
    registers: registers.map(toRegister),
    sensors,
    equipment,
    roles: groupRoles(roles),
    actuators,
    linkChanges: links.map(toLinkChange),
  };
}

/**
 * ScalePoints as stored (JSON text): an array of {F, V} numbers, else [] — unset, unparseable or
 * any malformed point makes the whole list empty rather than half a curve.
 */
export function parseScalePoints(text: unknown): { F: number; V: number }[] {
  if (typeof text !== 'string') return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  const points: { F: number; V: number }[] = [];
  for (const p of value) {
    if (typeof p !== 'object' || p === null || !Number.isFinite(p.F) || !Number.isFinite(p.V))
      return [];
    points.push({ F: p.F, V: p.V });
  }
  return points;
}

async function loadActuators(db: Queryable, siteId: number): Promise<ActuatorRows> {
  const q = (fields: Field[], table: string, extra: string, order: string) =>
    db.query<ActuatorRecord>(
      `SELECT ${selectList(fields, 't')}${extra} FROM ${table} t WHERE t.site_id = $1 ORDER BY ${order}`,
      [siteId],
    );
  const [actuators, scalings, triggers, connections] = await Promise.all([
    q(records.ACTUATOR, 'actuators', '', 't.actuator_id'),
    q(
      records.SENSOR_SCALING,
      'actuator_sensor_scalings',
      ', t.scale_points AS "_scalePoints"',
      't.actuator_id, t.scaling_id',
    ),
    q(records.SENSOR_TRIGGER, 'actuator_sensor_triggers', '', 't.actuator_id, t.position'),
    q(
      records.TANK_GROUP_CONNECTION,
      'actuator_tank_group_connections',
      '',
      't.actuator_id, t.connection_id',
    ),
  ]);
  return {
    actuators: actuators.map((a) => isoTimes(a, ACTUATOR_TIMES)),
    scalings: scalings.map(({ _scalePoints, ...rec }) => ({
      ...rec,
      ScalePoints: parseScalePoints(_scalePoints),
    })),
    triggers,
    connections,
  };
}
