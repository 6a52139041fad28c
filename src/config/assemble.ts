import { EQUIPMENT, type AttachKind, type TelemetryKind } from '../equipment.js';
import type { ConfigData, Item, RegisterRow } from './data.js';

// Links loaded rows into configuration entries with Maps (no query per equipment), and decides
// what an /updates path returns (contract §5): entries whose own record, registers (or their
// Modbus devices), sensors or links changed at or after the cut-off. A link change (a register
// that joined, left or moved within a list, a role set, re-pointed or dropped) has its own stamp,
// since it leaves the register rows as they were. An index is built once per load and shared by
// requests (the cache), so nothing here writes to it after construction.

/** The /updates cut-off in ms since the epoch; null on the other paths (everything is returned). */
export type Since = number | null;

export interface SensorEntry {
  sensor: Item;
  registers: RegisterRow[];
  changed: boolean;
}

export interface EquipmentEntry {
  kind: AttachKind;
  equipment: Item;
  /** In role order; register null for an unconfigured role. */
  roles: { role: string; register: RegisterRow | null }[];
  /** Registers of the equipment's sensors: sensors by id, registers by position. */
  sensorRegisters: RegisterRow[];
  changed: boolean;
}

export const changed = (item: Item, since: Since) => since !== null && item.stamp >= since;

/** When an equipment's links last changed: per register of its register list, per role, and the latest of all. */
interface LinkStamps {
  registers: Map<string, number>;
  roles: Map<string, number>;
  latest: number;
}
const NO_LINKS: LinkStamps = { registers: new Map(), roles: new Map(), latest: -Infinity };
const linksChanged = (l: LinkStamps, since: Since) => since !== null && l.latest >= since;
const byId = (a: RegisterRow, b: RegisterRow) =>
  BigInt(a.rec.SiteIODeviceRegisterID) < BigInt(b.rec.SiteIODeviceRegisterID) ? -1 : 1;
/** Everything without a cut-off; with one, only what changed. */
const keep = <T extends { changed: boolean }>(list: T[], since: Since) =>
  since === null ? list : list.filter((e) => e.changed);

export class ConfigIndex {
  readonly registers = new Map<string, RegisterRow>();
  private readonly bySensor = new Map<number, RegisterRow[]>();
  private readonly sensors = new Map<number, Item>();
  /** `typeCode:equipmentId` -> ids of the sensors attached to that equipment. */
  private readonly attached = new Map<string, number[]>();
  /** Per kind, equipment id -> its link stamps. */
  private readonly links = new Map<TelemetryKind, Map<number, LinkStamps>>();

  constructor(readonly data: ConfigData) {
    for (const r of data.registers) {
      this.registers.set(r.rec.SiteIODeviceRegisterID, r);
      if (r.sensorId === null) continue;
      let list = this.bySensor.get(r.sensorId);
      if (!list) this.bySensor.set(r.sensorId, (list = []));
      list.push(r);
    }
    for (const list of this.bySensor.values()) list.sort((a, b) => a.position! - b.position!);
    for (const s of data.sensors) {
      this.sensors.set(s.rec.SiteSensorID, s);
      if (s.rec.EquipmentTypeID === null || s.rec.EquipmentID === null) continue;
      const key = `${s.rec.EquipmentTypeID}:${s.rec.EquipmentID}`;
      let ids = this.attached.get(key);
      if (!ids) this.attached.set(key, (ids = []));
      ids.push(s.rec.SiteSensorID);
    }
    for (const c of data.linkChanges) {
      let ofKind = this.links.get(c.kind);
      if (!ofKind) this.links.set(c.kind, (ofKind = new Map()));
      let l = ofKind.get(c.id);
      if (!l) ofKind.set(c.id, (l = { registers: new Map(), roles: new Map(), latest: -Infinity }));
      if (c.role !== null) l.roles.set(c.role, c.stamp);
      else if (c.registerId !== null) l.registers.set(c.registerId, c.stamp);
      l.latest = Math.max(l.latest, c.stamp);
    }
  }

  private linksOf(kind: TelemetryKind, id: number): LinkStamps {
    return this.links.get(kind)?.get(id) ?? NO_LINKS;
  }

  devices(since: Since): Item[] {
    return since === null ? this.data.devices : this.data.devices.filter((d) => changed(d, since));
  }

  registersOfSensor(sensorId: number): RegisterRow[] {
    return this.bySensor.get(sensorId) ?? [];
  }

  sensorEntries(since: Since): SensorEntry[] {
    const all = this.data.sensors.map((sensor) => {
      const registers = this.registersOfSensor(sensor.rec.SiteSensorID);
      const isChanged =
        changed(sensor, since) ||
        registers.some((r) => changed(r, since)) ||
        linksChanged(this.linksOf('sensor', sensor.rec.SiteSensorID), since);
      return { sensor, registers, changed: isChanged };
    });
    return keep(all, since);
  }

  equipmentEntries(kind: AttachKind, since: Since): EquipmentEntry[] {
    return keep(
      this.data.equipment[kind].map((e) => this.equipmentEntry(kind, e, since)),
      since,
    );
  }

  /** The one entry of a by-id load (loadEquipment), whole; undefined if it vanished meanwhile. */
  onlyEquipment(kind: AttachKind): EquipmentEntry | undefined {
    return this.equipmentEntries(kind, null)[0];
  }

  /**
   * By-id /updates of a sensor: its registers that changed (themselves or through their device) or
   * whose link to it did, then those that left it since, by id, as they are now (ConnectionSensorID
   * another sensor, or null).
   */
  sensorUpdates(sensorId: number, since: number): RegisterRow[] {
    return this.registerUpdates(
      this.registersOfSensor(sensorId),
      this.linksOf('sensor', sensorId).registers,
      since,
    );
  }

  /** By-id /updates of a meter, pump or tank group: as sensorUpdates, and the roles changed, a dropped role as null. */
  equipmentUpdates(entry: EquipmentEntry, since: number): EquipmentEntry {
    const id = entry.equipment.rec[EQUIPMENT[entry.kind].listIdField] as number;
    const links = this.linksOf(entry.kind, id);
    const roles = entry.roles.filter(
      (r) =>
        (r.register && changed(r.register, since)) ||
        (links.roles.get(r.role) ?? -Infinity) >= since,
    );
    const present = new Set(entry.roles.map((r) => r.role));
    for (const [role, t] of links.roles)
      if (t >= since && !present.has(role)) roles.push({ role, register: null });
    return {
      ...entry,
      roles,
      sensorRegisters: this.registerUpdates(entry.sensorRegisters, links.registers, since),
    };
  }

  private registerUpdates(
    current: RegisterRow[],
    links: Map<string, number>,
    since: number,
  ): RegisterRow[] {
    const linkedSince = (id: string) => (links.get(id) ?? -Infinity) >= since;
    const kept = current.filter(
      (r) => changed(r, since) || linkedSince(r.rec.SiteIODeviceRegisterID),
    );
    const present = new Set(current.map((r) => r.rec.SiteIODeviceRegisterID));
    const left = [...links.keys()]
      .filter((id) => !present.has(id) && linkedSince(id))
      .flatMap((id) => this.registers.get(id) ?? []);
    return [...kept, ...left.sort(byId)];
  }

  private equipmentEntry(kind: AttachKind, equipment: Item, since: Since): EquipmentEntry {
    const id = equipment.rec[EQUIPMENT[kind].listIdField] as number;
    const roles = (this.data.roles.get(`${kind}:${id}`) ?? []).map(({ role, registerId }) => ({
      role,
      register: registerId === null ? null : (this.registers.get(registerId) ?? null),
    }));
    const sensorIds = new Set(this.attached.get(`${EQUIPMENT[kind].typeId}:${id}`) ?? []);
    const own = kind === 'meter' ? (equipment.rec.SiteSensorID as number | null) : null;
    if (own !== null && this.sensors.has(own)) sensorIds.add(own);
    const ordered = [...sensorIds].sort((a, b) => a - b);
    const sensorRegisters = ordered.flatMap((s) => this.registersOfSensor(s));
    const isChanged =
      since !== null &&
      (changed(equipment, since) ||
        roles.some((r) => r.register && changed(r.register, since)) ||
        sensorRegisters.some((r) => changed(r, since)) ||
        ordered.some((s) => changed(this.sensors.get(s)!, since)) ||
        linksChanged(this.linksOf(kind, id), since));
    return { kind, equipment, roles, sensorRegisters, changed: isChanged };
  }
}
