import { EQUIPMENT, type AttachKind } from '../equipment.js';
import type { Queryable } from '../db/index.js';
import * as records from '../schemas/records.js';
import { ATTACHED_FIELDS, emptyConfig, type ConfigData, type SensorRecord } from './data.js';
import {
  groupRoles,
  items,
  LINK_CHANGES,
  REGISTER_SELECT,
  ROLES,
  toLinkChange,
  toRegister,
  traced,
  type LinkChangeRow,
  type RegisterSelectRow,
  type RoleRow,
} from './queries.js';

// The by-id paths read the same columns as a site's load, for one sensor or equipment only.

/** A sensor's registers, and those that left it, with the sensor's link changes. */
export async function loadSensor(
  db: Queryable,
  sensorId: number,
  siteId: number,
): Promise<ConfigData> {
  const [registers, links] = await Promise.all([
    db.query<RegisterSelectRow>(
      `${REGISTER_SELECT} WHERE r.site_id = $2 AND (sr.sensor_id = $1 OR ${traced(`'sensor'`, '$1')}) ORDER BY r.register_id`,
      [sensorId, siteId],
    ),
    db.query<LinkChangeRow>(
      `${LINK_CHANGES} WHERE equipment_kind = 'sensor' AND equipment_id = $1`,
      [sensorId],
    ),
  ]);
  return {
    ...emptyConfig(),
    registers: registers.map(toRegister),
    linkChanges: links.map(toLinkChange),
  };
}

/**
 * One meter, pump or tank group with what its entry is built from: its roles, its sensors (those
 * attached to it by EquipmentTypeID/EquipmentID, and a meter's SiteSensorID) and their registers,
 * the registers that left it and its link changes.
 */
export async function loadEquipment(
  db: Queryable,
  kind: AttachKind,
  id: number,
  siteId: number,
): Promise<ConfigData> {
  const { table, idColumn, typeId } = EQUIPMENT[kind];
  // $1 site, $2 equipment id, $3 equipment type code, $4 role kind
  const ownSensor =
    kind === 'meter'
      ? ' OR s.sensor_id = (SELECT site_sensor_id FROM flow_meters WHERE meter_id = $2::int)'
      : '';
  const sensorIds = `SELECT s.sensor_id FROM sensors s WHERE s.site_id = $1::int AND ((s.equipment_type_id = $3::int AND s.equipment_id = $2::int)${ownSensor})`;
  const roleIds = `SELECT register_id FROM equipment_register_roles WHERE equipment_kind = $4::text AND equipment_id = $2::int`;
  const p = [siteId, id, typeId, kind];
  const [equipment, sensors, registers, roles, links] = await Promise.all([
    items(db, ATTACHED_FIELDS[kind], table, idColumn, `t.${idColumn} = $1`, [id]),
    items<SensorRecord>(
      db,
      records.SENSOR,
      'sensors',
      'sensor_id',
      `t.sensor_id IN (${sensorIds})`,
      p.slice(0, 3),
    ),
    db.query<RegisterSelectRow>(
      `${REGISTER_SELECT} WHERE r.site_id = $1 AND (r.register_id IN (${roleIds}) OR sr.sensor_id IN (${sensorIds}) OR ${traced('$4::text', '$2::int')}) ORDER BY r.register_id`,
      p,
    ),
    db.query<RoleRow>(
      `${ROLES} WHERE equipment_kind = $1 AND equipment_id = $2 ORDER BY position`,
      [kind, id],
    ),
    db.query<LinkChangeRow>(`${LINK_CHANGES} WHERE equipment_kind = $1 AND equipment_id = $2`, [
      kind,
      id,
    ]),
  ]);
  const empty = emptyConfig();
  return {
    ...empty,
    registers: registers.map(toRegister),
    sensors,
    equipment: { ...empty.equipment, [kind]: equipment },
    roles: groupRoles(roles),
    linkChanges: links.map(toLinkChange),
  };
}
