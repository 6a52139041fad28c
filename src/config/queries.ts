import type { Queryable, Row } from '../db/index.js';
import * as records from '../schemas/records.js';
import { selectList, type Field } from '../schemas/records.js';
import { toIso } from '../time.js';
import type { ConfigData, Item, LinkChange, RegisterRecord, RegisterRow } from './data.js';

// The SQL pieces the site load and the by-id loads share: registers with their device and sensor,
// records of one table, link changes and register roles, each with its row-to-record mapping.

/** A register changes with its Modbus device too: SiteModbusInOutDevices and Connection* come from it. */
export const REGISTER_SELECT = `SELECT ${selectList(records.REGISTER, 'r')},
    d.device_name AS "_deviceName", d.slave_address AS "_slaveAddress", sr.sensor_id AS "_sensorId", sr.position AS "_position",
    greatest(r.updated_at, d.updated_at) AS "_stamp"
  FROM registers r
  JOIN modbus_devices d ON d.device_id = r.device_id
  LEFT JOIN sensor_registers sr ON sr.register_id = r.register_id`;

/** A row of REGISTER_SELECT: the register's record and what is derived from its device and sensor. */
export type RegisterSelectRow = RegisterRecord & {
  _deviceName: string;
  _slaveAddress: number;
  _sensorId: number | null;
  _position: number | null;
  _stamp: Date;
};

/** Interface §2.1 plus the derived device and connection fields (contract §3). */
export function toRegister(row: RegisterSelectRow): RegisterRow {
  const { _deviceName, _slaveAddress, _sensorId, _position, _stamp, ...rec } = row;
  const attached = _sensorId !== null;
  rec.SiteModbusInOutDevices = { DeviceName: _deviceName, SlaveAddress: _slaveAddress };
  rec.ConnectionName = attached ? _deviceName : null;
  rec.ConnectionSlaveAddress = attached ? _slaveAddress : null;
  rec.ConnectionSensorID = attached ? _sensorId : null;
  return { rec, stamp: _stamp.getTime(), sensorId: _sensorId, position: _position };
}

export const timeFields = (fields: Field[]) =>
  fields.filter((f) => f.kind === 'time').map((f) => f.name);

/** Timestamps arrive as Date objects; the interface wants UTC ISO text. */
export function isoTimes<R extends Row>(rec: R, names: string[]): R {
  const fields: Row = rec;
  for (const n of names) {
    const t = fields[n];
    fields[n] =
      t instanceof Date || typeof t === 'string' || typeof t === 'number' ? toIso(t) : null;
  }
  return rec;
}

/** The records of one table that match `where` (its alias is t), by id, with their stamps. */
export async function items<R extends Row = Row>(
  db: Queryable,
  fields: Field[],
  table: string,
  id: string,
  where: string,
  params: unknown[],
  times: string[] = [],
) {
  const rows = await db.query<Row & { _stamp: Date }>(
    `SELECT ${selectList(fields, 't')}, t.updated_at AS "_stamp" FROM ${table} t WHERE ${where} ORDER BY t.${id}`,
    params,
  );
  return rows.map(({ _stamp, ...rec }): Item<R> => ({
    rec: isoTimes(rec as R, times),
    stamp: _stamp.getTime(),
  }));
}

export const LINK_CHANGES =
  'SELECT equipment_kind, equipment_id, role, register_id, changed_at FROM config_link_changes';
export interface LinkChangeRow {
  equipment_kind: LinkChange['kind'];
  equipment_id: number;
  role: string | null;
  register_id: string | null;
  changed_at: Date;
}
export const toLinkChange = (r: LinkChangeRow): LinkChange => ({
  kind: r.equipment_kind,
  id: r.equipment_id,
  role: r.role,
  registerId: r.register_id,
  stamp: r.changed_at.getTime(),
});
/** Registers whose link to the equipment changed, some of which left it: read as they are now, so /updates can show where they went. */
export const traced = (kind: string, id: string) =>
  `r.register_id IN (SELECT register_id FROM config_link_changes WHERE equipment_kind = ${kind} AND equipment_id = ${id})`;

export const ROLES =
  'SELECT equipment_kind, equipment_id, role, register_id FROM equipment_register_roles';
export interface RoleRow {
  equipment_kind: string;
  equipment_id: number;
  role: string;
  register_id: string | null;
}

export function groupRoles(rows: RoleRow[]): ConfigData['roles'] {
  const out: ConfigData['roles'] = new Map();
  for (const r of rows) {
    const key = `${r.equipment_kind}:${r.equipment_id}`;
    let list = out.get(key);
    if (!list) out.set(key, (list = []));
    list.push({ role: r.role, registerId: r.register_id });
  }
  return out;
}
