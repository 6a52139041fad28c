import type { Queryable, Row } from '../../../db/index.js';
import {
  ACTUATOR, FLOW_METER, MODBUS_DEVICE, PUMP, REGISTER, SENSOR, SENSOR_SCALING, SENSOR_TRIGGER, SITE, TANK_GROUP,
  TANK_GROUP_CONNECTION, selectList, type Field,
} from '../../../schemas/records.js';
import { toIso } from '../../../time.js';

// SQL of the configuration read API. A site's configuration is a fixed set of queries (one per
// table, whatever the site's size); the by-id paths read the same columns for one equipment.
// `$2` is always the updates cut-off (null: no cut-off); `_changed` says whether a row changed at or
// after it. Rows come back in their interface shape, plus `_`-prefixed internals the shaper drops.

export type EquipmentKind = 'meter' | 'pump' | 'tank';

export interface RegisterRow {
  rec: Row;
  sensorId: number | null;
  position: number | null;
  /** The register or its Modbus device changed at or after the cut-off. */
  changed: boolean;
  /** Light form, made once and shared by every entry that lists the register. */
  light?: Row;
}

/** A record in its interface shape, and whether it changed at or after the cut-off. */
export interface Item {
  rec: Row;
  changed: boolean;
}

export interface ConfigData {
  site?: Row;
  devices: Item[];
  /** Ordered by register id. */
  registers: RegisterRow[];
  sensors: Item[];
  meters: Item[];
  pumps: Item[];
  tanks: Item[];
  /** `kind:id` -> roles in their order; registerId null for an unconfigured role. */
  roles: Map<string, { role: string; registerId: string | null }[]>;
  actuators: ActuatorRows;
}

export interface ActuatorRows {
  actuators: Row[];
  scalings: Row[];
  triggers: Row[];
  connections: Row[];
}

export const EQUIPMENT_TABLES: Record<EquipmentKind, { table: string; id: string; fields: Field[]; typeId: number }> = {
  meter: { table: 'flow_meters', id: 'meter_id', fields: FLOW_METER, typeId: 1 },
  pump: { table: 'pumps', id: 'pump_id', fields: PUMP, typeId: 2 },
  tank: { table: 'tank_groups', id: 'tank_group_id', fields: TANK_GROUP, typeId: 3 },
};

const REGISTER_SELECT = `SELECT ${selectList(REGISTER, 'r')},
    d.device_name AS "_deviceName", d.slave_address AS "_slaveAddress", sr.sensor_id AS "_sensorId", sr.position AS "_position",
    (r.updated_at >= $2::timestamptz OR d.updated_at >= $2::timestamptz) AS "_changed"
  FROM registers r
  JOIN modbus_devices d ON d.device_id = r.device_id
  LEFT JOIN sensor_registers sr ON sr.register_id = r.register_id`;

/** Interface §2.1 plus the derived device and connection fields (contract §3). */
function toRegister(row: Row): RegisterRow {
  const { _deviceName, _slaveAddress, _sensorId, _position, _changed, ...rec } = row;
  const attached = _sensorId !== null;
  rec.SiteModbusInOutDevices = { DeviceName: _deviceName, SlaveAddress: _slaveAddress };
  rec.ConnectionName = attached ? _deviceName : null;
  rec.ConnectionSlaveAddress = attached ? _slaveAddress : null;
  rec.ConnectionSensorID = attached ? _sensorId : null;
  return { rec, sensorId: _sensorId, position: _position, changed: _changed === true };
}

const timeFields = (fields: Field[]) => fields.filter((f) => f.kind === 'time').map((f) => f.name);
const DEVICE_TIMES = timeFields(MODBUS_DEVICE);
const ACTUATOR_TIMES = timeFields(ACTUATOR);
/** Timestamps arrive as Date objects; the interface wants UTC ISO text. */
function isoTimes(rows: Row[], names: string[]): Row[] {
  if (names.length) for (const r of rows) for (const n of names) r[n] = toIso(r[n]);
  return rows;
}

async function records(db: Queryable, fields: Field[], table: string, id: string, where: string, params: unknown[]): Promise<Item[]> {
  const rows = await db.query(
    `SELECT ${selectList(fields, 't')}, (t.updated_at >= $2::timestamptz) AS "_changed" FROM ${table} t WHERE ${where} ORDER BY t.${id}`,
    params,
  );
  return rows.map(({ _changed, ...rec }) => ({ rec, changed: _changed === true }));
}

/** Every table a site's configuration is read from (all carry site_id). */
const CONFIG_TABLES = [
  'modbus_devices', 'registers', 'sensor_registers', 'sensors', 'flow_meters', 'pumps', 'tank_groups', 'equipment_register_roles',
  'actuators', 'actuator_sensor_scalings', 'actuator_sensor_triggers', 'actuator_tank_group_connections',
];

/**
 * A value that changes whenever anything a site's configuration is built from changes, in one
 * cheap query: per table the row count and the sum of the rows' xmin (every insert or update
 * writes a row version with a newer transaction id, so the sum grows), plus the site's own
 * configuration fields (not its LastCommunication, which uploads keep moving). Undefined: no such site.
 */
export async function siteFingerprint(db: Queryable, siteId: number): Promise<string | undefined> {
  const perTable = CONFIG_TABLES.map((t) => `(SELECT count(*) || '/' || coalesce(sum(xmin::text::bigint), 0) FROM ${t} WHERE site_id = $1)`);
  const [row] = await db.query<{ fp: string }>(
    `SELECT concat_ws('|', row(${SITE.map((f) => `s.${f.column}`).join(', ')}, c.name)::text, ${perTable.join(', ')}) AS fp
       FROM sites s JOIN companies c ON c.company_id = s.company_id WHERE s.site_id = $1`,
    [siteId],
  );
  return row?.fp;
}

export type SitePart = 'site' | 'devices' | 'sensors' | 'meters' | 'pumps' | 'tanks' | 'actuators';

/** The site record, or undefined when there is no such site. */
export async function findSite(db: Queryable, siteId: number): Promise<Row | undefined> {
  const [site] = await db.query(
    `SELECT ${selectList(SITE, 's')}, c.name AS "CompanyName" FROM sites s JOIN companies c ON c.company_id = s.company_id WHERE s.site_id = $1`,
    [siteId],
  );
  return site;
}

/**
 * The parts of a site's configuration a route needs, in at most a dozen queries run side by side.
 * Registers, sensors and roles come with any equipment part: entries are built from them.
 */
export async function loadSite(db: Queryable, siteId: number, since: string | null, parts: Set<SitePart>): Promise<ConfigData> {
  const p = [siteId, since];
  const none = Promise.resolve([] as never[]);
  const kinds = (['meter', 'pump', 'tank'] as const).filter((k) => parts.has(`${k}s`));
  const needRegisters = parts.has('sensors') || kinds.length > 0;
  const equipment = (k: EquipmentKind) => {
    const t = EQUIPMENT_TABLES[k];
    return kinds.includes(k) ? records(db, t.fields, t.table, t.id, 't.site_id = $1', p) : none;
  };
  const [site, devices, registers, sensors, meters, pumps, tanks, roles, actuators] = await Promise.all([
    parts.has('site') ? findSite(db, siteId) : undefined,
    parts.has('devices') ? records(db, MODBUS_DEVICE, 'modbus_devices', 'device_id', 't.site_id = $1', p) : none,
    needRegisters ? db.query(`${REGISTER_SELECT} WHERE r.site_id = $1 ORDER BY r.register_id`, p) : none,
    needRegisters ? records(db, SENSOR, 'sensors', 'sensor_id', 't.site_id = $1', p) : none,
    equipment('meter'),
    equipment('pump'),
    equipment('tank'),
    kinds.length
      ? db.query(
          `SELECT equipment_kind, equipment_id, role, register_id FROM equipment_register_roles
            WHERE site_id = $1 AND equipment_kind = ANY($2::text[]) ORDER BY equipment_kind, equipment_id, position`,
          [siteId, kinds],
        )
      : none,
    parts.has('actuators') ? loadActuators(db, siteId) : undefined,
  ]);
  return {
    site,
    devices: devices.map((d) => ({ ...d, rec: isoTimes([d.rec], DEVICE_TIMES)[0] })),
    registers: registers.map(toRegister),
    sensors, meters, pumps, tanks,
    roles: groupRoles(roles as Row[]),
    actuators: actuators ?? NO_ACTUATORS,
  };
}

function groupRoles(rows: Row[]): ConfigData['roles'] {
  const out: ConfigData['roles'] = new Map();
  for (const r of rows) {
    const key = `${r.equipment_kind}:${r.equipment_id}`;
    let list = out.get(key);
    if (!list) out.set(key, (list = []));
    list.push({ role: r.role, registerId: r.register_id });
  }
  return out;
}

const NO_ACTUATORS: ActuatorRows = { actuators: [], scalings: [], triggers: [], connections: [] };

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
    if (typeof p !== 'object' || p === null || !Number.isFinite(p.F) || !Number.isFinite(p.V)) return [];
    points.push({ F: p.F, V: p.V });
  }
  return points;
}

async function loadActuators(db: Queryable, siteId: number): Promise<ActuatorRows> {
  const q = (fields: Field[], table: string, extra: string, order: string) =>
    db.query(`SELECT ${selectList(fields, 't')}${extra} FROM ${table} t WHERE t.site_id = $1 ORDER BY ${order}`, [siteId]);
  const [actuators, scalings, triggers, connections] = await Promise.all([
    q(ACTUATOR, 'actuators', '', 't.actuator_id'),
    q(SENSOR_SCALING, 'actuator_sensor_scalings', ', t.scale_points AS "_scalePoints"', 't.actuator_id, t.scaling_id'),
    q(SENSOR_TRIGGER, 'actuator_sensor_triggers', '', 't.actuator_id, t.position'),
    q(TANK_GROUP_CONNECTION, 'actuator_tank_group_connections', '', 't.actuator_id, t.connection_id'),
  ]);
  return {
    actuators: isoTimes(actuators, ACTUATOR_TIMES),
    scalings: scalings.map(({ _scalePoints, ...rec }) => ({ ...rec, ScalePoints: parseScalePoints(_scalePoints) })),
    triggers,
    connections,
  };
}

/** The registers a sensor reads, in their order. */
export async function loadSensorRegisters(db: Queryable, sensorId: number, since: string | null): Promise<RegisterRow[]> {
  const rows = await db.query(`${REGISTER_SELECT} WHERE sr.sensor_id = $1 ORDER BY sr.position`, [sensorId, since]);
  return rows.map(toRegister);
}

/**
 * One meter, pump or tank group with what its entry is built from: its roles, its sensors (those
 * attached to it by EquipmentTypeID/EquipmentID, and a meter's SiteSensorID) and their registers.
 */
export async function loadEquipment(db: Queryable, kind: EquipmentKind, id: number, siteId: number, since: string | null): Promise<ConfigData> {
  const t = EQUIPMENT_TABLES[kind];
  // $1 site, $2 cut-off, $3 equipment id, $4 equipment type code, $5 role kind
  const ownSensor = kind === 'meter' ? ' OR s.sensor_id = (SELECT site_sensor_id FROM flow_meters WHERE meter_id = $3::int)' : '';
  const sensorIds = `SELECT s.sensor_id FROM sensors s WHERE s.site_id = $1::int AND ((s.equipment_type_id = $4::int AND s.equipment_id = $3::int)${ownSensor})`;
  const roleIds = `SELECT register_id FROM equipment_register_roles WHERE equipment_kind = $5::text AND equipment_id = $3::int`;
  const p = [siteId, since, id, t.typeId];
  const [equipment, sensors, registers, roles] = await Promise.all([
    records(db, t.fields, t.table, t.id, `t.${t.id} = $1`, [id, since]),
    records(db, SENSOR, 'sensors', 'sensor_id', `t.sensor_id IN (${sensorIds})`, p),
    db.query(`${REGISTER_SELECT} WHERE r.site_id = $1 AND (r.register_id IN (${roleIds}) OR sr.sensor_id IN (${sensorIds})) ORDER BY r.register_id`, [...p, kind]),
    db.query(
      `SELECT equipment_kind, equipment_id, role, register_id FROM equipment_register_roles
        WHERE equipment_kind = $1 AND equipment_id = $2 ORDER BY position`,
      [kind, id],
    ),
  ]);
  return {
    devices: [],
    registers: registers.map(toRegister),
    sensors,
    meters: kind === 'meter' ? equipment : [],
    pumps: kind === 'pump' ? equipment : [],
    tanks: kind === 'tank' ? equipment : [],
    roles: groupRoles(roles),
    actuators: NO_ACTUATORS,
  };
}
