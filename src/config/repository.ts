import { EQUIPMENT, type AttachKind } from '../equipment.js';
import type { Queryable, Row } from '../db/index.js';
import * as records from '../schemas/records.js';
import { selectList, type Field } from '../schemas/records.js';
import { toIso } from '../time.js';

// SQL of the configuration read API. A site's configuration is a fixed set of queries (one per
// table, whatever the site's size); the by-id paths read the same columns for one equipment.
// Rows come back in their interface shape; `stamp` (ms) is when the import last changed them,
// which the /updates paths compare with their startDate.

export type EquipmentKind = AttachKind;

/** A record in its interface shape and the time it last changed. */
export interface Item<R extends Row = Row> {
  rec: R;
  stamp: number;
}

/** Interface records by the fields the index reads; bigints (ids) come as text. */
export type RegisterRecord = Row & { SiteIODeviceRegisterID: string };
export type SensorRecord = Row & {
  SiteSensorID: number;
  EquipmentTypeID: number | null;
  EquipmentID: string | null;
};
/** An actuator, or one of its scalings, triggers and tank-group connections. */
export type ActuatorRecord = Row & { SiteActuatorID: number };

export interface RegisterRow extends Item<RegisterRecord> {
  /** The sensor that reads the register, and where in its list. */
  sensorId: number | null;
  position: number | null;
  /** Light form, made once and shared by every entry (and request) that lists the register. */
  light?: Row;
}

export interface ActuatorRows {
  actuators: ActuatorRecord[];
  scalings: ActuatorRecord[];
  triggers: ActuatorRecord[];
  connections: ActuatorRecord[];
}

export interface ConfigData {
  site?: Row;
  devices: Item[];
  /** Ordered by register id. */
  registers: RegisterRow[];
  sensors: Item<SensorRecord>[];
  meters: Item[];
  pumps: Item[];
  tanks: Item[];
  /** `kind:id` -> roles in their order; registerId null for an unconfigured role. */
  roles: Map<string, { role: string; registerId: string | null }[]>;
  actuators: ActuatorRows;
  /** When links last changed (table config_link_changes): a register of a list (role null) or a role. */
  linkChanges: LinkChange[];
}

export interface LinkChange {
  kind: 'sensor' | EquipmentKind;
  id: number;
  role: string | null;
  registerId: string | null;
  stamp: number;
}

const attach = (kind: AttachKind) => ({
  table: EQUIPMENT[kind].table,
  id: EQUIPMENT[kind].idColumn,
  typeId: EQUIPMENT[kind].typeId,
});

export const EQUIPMENT_TABLES: Record<
  EquipmentKind,
  { table: string; id: string; fields: Field[]; typeId: number }
> = {
  meter: { ...attach('meter'), fields: records.FLOW_METER },
  pump: { ...attach('pump'), fields: records.PUMP },
  tank: { ...attach('tank'), fields: records.TANK_GROUP },
};

/** A register changes with its Modbus device too: SiteModbusInOutDevices and Connection* come from it. */
const REGISTER_SELECT = `SELECT ${selectList(records.REGISTER, 'r')},
    d.device_name AS "_deviceName", d.slave_address AS "_slaveAddress", sr.sensor_id AS "_sensorId", sr.position AS "_position",
    greatest(r.updated_at, d.updated_at) AS "_stamp"
  FROM registers r
  JOIN modbus_devices d ON d.device_id = r.device_id
  LEFT JOIN sensor_registers sr ON sr.register_id = r.register_id`;

/** A row of REGISTER_SELECT: the register's record and what is derived from its device and sensor. */
type RegisterSelectRow = RegisterRecord & {
  _deviceName: string;
  _slaveAddress: number;
  _sensorId: number | null;
  _position: number | null;
  _stamp: Date;
};

/** Interface §2.1 plus the derived device and connection fields (contract §3). */
function toRegister(row: RegisterSelectRow): RegisterRow {
  const { _deviceName, _slaveAddress, _sensorId, _position, _stamp, ...rec } = row;
  const attached = _sensorId !== null;
  rec.SiteModbusInOutDevices = { DeviceName: _deviceName, SlaveAddress: _slaveAddress };
  rec.ConnectionName = attached ? _deviceName : null;
  rec.ConnectionSlaveAddress = attached ? _slaveAddress : null;
  rec.ConnectionSensorID = attached ? _sensorId : null;
  return { rec, stamp: _stamp.getTime(), sensorId: _sensorId, position: _position };
}

const timeFields = (fields: Field[]) => fields.filter((f) => f.kind === 'time').map((f) => f.name);
const DEVICE_TIMES = timeFields(records.MODBUS_DEVICE);
const ACTUATOR_TIMES = timeFields(records.ACTUATOR);
/** Timestamps arrive as Date objects; the interface wants UTC ISO text. */
function isoTimes<R extends Row>(rec: R, names: string[]): R {
  const fields: Row = rec;
  for (const n of names) {
    const t = fields[n];
    fields[n] =
      t instanceof Date || typeof t === 'string' || typeof t === 'number' ? toIso(t) : null;
  }
  return rec;
}

async function items<R extends Row = Row>(
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

const LINK_CHANGES =
  'SELECT equipment_kind, equipment_id, role, register_id, changed_at FROM config_link_changes';
interface LinkChangeRow {
  equipment_kind: LinkChange['kind'];
  equipment_id: number;
  role: string | null;
  register_id: string | null;
  changed_at: Date;
}
const toLinkChange = (r: LinkChangeRow): LinkChange => ({
  kind: r.equipment_kind,
  id: r.equipment_id,
  role: r.role,
  registerId: r.register_id,
  stamp: r.changed_at.getTime(),
});
/** Registers whose link to the equipment changed, some of which left it: read as they are now, so /updates can show where they went. */
const traced = (kind: string, id: string) =>
  `r.register_id IN (SELECT register_id FROM config_link_changes WHERE equipment_kind = ${kind} AND equipment_id = ${id})`;
/** Nothing: what the by-id loads start from. */
export const emptyConfig = (): ConfigData => ({
  devices: [],
  registers: [],
  sensors: [],
  meters: [],
  pumps: [],
  tanks: [],
  roles: new Map(),
  actuators: { actuators: [], scalings: [], triggers: [], connections: [] },
  linkChanges: [],
});

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

interface RoleRow {
  equipment_kind: string;
  equipment_id: number;
  role: string;
  register_id: string | null;
}

function groupRoles(rows: RoleRow[]): ConfigData['roles'] {
  const out: ConfigData['roles'] = new Map();
  for (const r of rows) {
    const key = `${r.equipment_kind}:${r.equipment_id}`;
    let list = out.get(key);
    if (!list) out.set(key, (list = []));
    list.push({ role: r.role, registerId: r.register_id });
  }
  return out;
}

/**
 * A site's whole configuration in thirteen queries, whatever its size (side by side on a pool, one
 * after another in a snapshot). `site` is undefined when there is no such site.
 */
export async function loadSite(db: Queryable, siteId: number): Promise<ConfigData> {
  const p = [siteId];
  const equipment = (k: EquipmentKind) =>
    items(
      db,
      EQUIPMENT_TABLES[k].fields,
      EQUIPMENT_TABLES[k].table,
      EQUIPMENT_TABLES[k].id,
      't.site_id = $1',
      p,
    );
  const [[site], devices, registers, sensors, meters, pumps, tanks, roles, actuators, links] =
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
      equipment('meter'),
      equipment('pump'),
      equipment('tank'),
      db.query<RoleRow>(
        `SELECT equipment_kind, equipment_id, role, register_id FROM equipment_register_roles WHERE site_id = $1 ORDER BY equipment_kind, equipment_id, position`,
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
    meters,
    pumps,
    tanks,
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
  kind: EquipmentKind,
  id: number,
  siteId: number,
): Promise<ConfigData> {
  const t = EQUIPMENT_TABLES[kind];
  // $1 site, $2 equipment id, $3 equipment type code, $4 role kind
  const ownSensor =
    kind === 'meter'
      ? ' OR s.sensor_id = (SELECT site_sensor_id FROM flow_meters WHERE meter_id = $2::int)'
      : '';
  const sensorIds = `SELECT s.sensor_id FROM sensors s WHERE s.site_id = $1::int AND ((s.equipment_type_id = $3::int AND s.equipment_id = $2::int)${ownSensor})`;
  const roleIds = `SELECT register_id FROM equipment_register_roles WHERE equipment_kind = $4::text AND equipment_id = $2::int`;
  const p = [siteId, id, t.typeId, kind];
  const [equipment, sensors, registers, roles, links] = await Promise.all([
    items(db, t.fields, t.table, t.id, `t.${t.id} = $1`, [id]),
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
      `SELECT equipment_kind, equipment_id, role, register_id FROM equipment_register_roles WHERE equipment_kind = $1 AND equipment_id = $2 ORDER BY position`,
      [kind, id],
    ),
    db.query<LinkChangeRow>(`${LINK_CHANGES} WHERE equipment_kind = $1 AND equipment_id = $2`, [
      kind,
      id,
    ]),
  ]);
  const list = ({ meter: 'meters', pump: 'pumps', tank: 'tanks' } as const)[kind];
  return {
    ...emptyConfig(),
    registers: registers.map(toRegister),
    sensors,
    [list]: equipment,
    roles: groupRoles(roles),
    linkChanges: links.map(toLinkChange),
  };
}
