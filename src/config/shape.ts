import type { Row } from '../db/index.js';
import { ATTACH_KINDS, EQUIPMENT, type AttachKind } from '../equipment.js';
import { ACTUATOR, ACTUATOR_HEAVY_FIELDS } from '../schemas/records.js';
import type { ConfigIndex, EquipmentEntry, SensorEntry, Since } from './assemble.js';
import type { ActuatorRecord, ActuatorRows, RegisterRow } from './data.js';

// The three shapes of contract §5: full (every field, nulls included), light (null properties
// stripped from every record, heavy actuator fields left out) and compact (interface §2.8).

const HEAVY = new Set(ACTUATOR_HEAVY_FIELDS);
const ACTUATOR_REGISTER_FIELDS = ACTUATOR.filter((f) => f.kind === 'bigint').map((f) => f.name);

/** An attachable kind's keys in a configuration entry: its record, its role map and its list in a site's. */
export function entryKeys(kind: AttachKind) {
  const {
    nameStem: name,
    config: { entry },
  } = EQUIPMENT[kind];
  return { record: entry, roles: `${name.toLowerCase()}Registers`, list: `${entry}s` };
}

function stripNulls(rec: Row, omit?: Set<string>): Row {
  const out: Row = {};
  for (const k in rec) {
    const v = rec[k];
    if (v !== null && v !== undefined && !omit?.has(k)) out[k] = v;
  }
  return out;
}

/** Full or light records; a register's light form is made once however many entries list it. */
export class Shaper {
  constructor(readonly light: boolean) {}
  record = (rec: Row): Row => (this.light ? stripNulls(rec) : rec);
  register = (r: RegisterRow): Row => (this.light ? (r.light ??= stripNulls(r.rec)) : r.rec);
  actuator = (rec: Row): Row => (this.light ? stripNulls(rec, HEAVY) : rec);
}

export const sensorConfig = (e: SensorEntry, s: Shaper) => ({
  sensor: s.record(e.sensor.rec),
  sensorRegisters: e.registers.map(s.register),
});

/** MeterRegistersDto, PumpRegistersDto, TankRegistersDto: role map (null: unconfigured role) and sensor registers. */
export const equipmentRegisters = (e: EquipmentEntry, s: Shaper) => ({
  [entryKeys(e.kind).roles]: Object.fromEntries(
    e.roles.map((r) => [r.role, r.register ? s.register(r.register) : null]),
  ),
  sensorRegisters: e.sensorRegisters.map(s.register),
});

/** MeterConfigDto, PumpConfigDto, TankConfigDto. */
export const equipmentConfig = (e: EquipmentEntry, s: Shaper) => ({
  [entryKeys(e.kind).record]: s.record(e.equipment.rec),
  ...equipmentRegisters(e, s),
});

/** Actuator configuration entries (interface §2.7), children grouped by actuator in one pass each. */
export function actuatorEntries(rows: ActuatorRows, s: Shaper): Row[] {
  const group = (list: ActuatorRecord[]) => {
    const out = new Map<number, Row[]>();
    for (const c of list) {
      let l = out.get(c.SiteActuatorID);
      if (!l) out.set(c.SiteActuatorID, (l = []));
      l.push(s.record(c));
    }
    return out;
  };
  const [scalings, triggers, connections] = [
    group(rows.scalings),
    group(rows.triggers),
    group(rows.connections),
  ];
  return rows.actuators.map((a) => ({
    actuator: s.actuator(a),
    sensorScalings: scalings.get(a.SiteActuatorID) ?? [],
    sensorTriggers: triggers.get(a.SiteActuatorID) ?? [],
    tankGroupConnections: connections.get(a.SiteActuatorID) ?? [],
  }));
}

/** Each attachable kind's list under its key in a site's configuration (meters, pumps, tankGroups). */
const byKind = <T>(list: (kind: AttachKind) => T): Record<string, T> =>
  Object.fromEntries(ATTACH_KINDS.map((k) => [entryKeys(k).list, list(k)]));

/** SiteConfigDto. */
export function siteConfig(index: ConfigIndex, s: Shaper, since: Since) {
  return {
    site: s.record(index.data.site!),
    devices: index.devices(since).map((d) => s.record(d.rec)),
    sensors: index.sensorEntries(since).map((e) => sensorConfig(e, s)),
    ...byKind((kind) => index.equipmentEntries(kind, since).map((e) => equipmentConfig(e, s))),
    actuators: actuatorEntries(index.data.actuators, s),
  };
}

/** Role maps of the compact shape hold register ids as JSON numbers (interface §2.8); a string only beyond 2^53. */
function compactId(id: string): number | string {
  const n = Number(id);
  return Number.isSafeInteger(n) ? n : id;
}

/**
 * Compact site configuration: records in full, registers once each (keyed by id, nulls stripped)
 * and referred to by id. `registers` holds every register the document refers to, the actuators'
 * register fields included.
 */
export function compactConfig(index: ConfigIndex, since: Since) {
  const used = new Set<string>();
  const idOf = (r: RegisterRow) => {
    used.add(r.rec.SiteIODeviceRegisterID);
    return r.rec.SiteIODeviceRegisterID;
  };
  const equipment = (kind: AttachKind) =>
    index.equipmentEntries(kind, since).map((e) => ({
      [entryKeys(kind).record]: e.equipment.rec,
      [entryKeys(kind).roles]: Object.fromEntries(
        e.roles.map((r) => [r.role, r.register ? compactId(idOf(r.register)) : null]),
      ),
      sensorRegisterIds: e.sensorRegisters.map(idOf),
    }));
  const sensors = index
    .sensorEntries(since)
    .map((e) => ({ sensor: e.sensor.rec, registerIds: e.registers.map(idOf) }));
  const lists = byKind(equipment);
  for (const a of index.data.actuators.actuators)
    for (const f of ACTUATOR_REGISTER_FIELDS) {
      const id = a[f];
      if (typeof id === 'string') used.add(id);
    }
  const light = new Shaper(true);
  const registers: Row = {};
  for (const r of index.data.registers)
    if (used.has(r.rec.SiteIODeviceRegisterID))
      registers[r.rec.SiteIODeviceRegisterID] = light.register(r);
  return {
    devices: Object.fromEntries(
      index.devices(since).map((d) => [d.rec.SiteModbusInOutDeviceID, d.rec]),
    ),
    registers,
    sensors,
    ...lists,
    actuators: actuatorEntries(index.data.actuators, new Shaper(false)),
  };
}
