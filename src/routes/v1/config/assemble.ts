import { EQUIPMENT_TABLES, type ConfigData, type EquipmentKind, type Item, type RegisterRow } from './repository.js';

// Links loaded rows into configuration entries with Maps (no query per equipment), and decides
// which entries an /updates path returns (contract §5): those whose own record, registers (or
// their Modbus devices) or sensors changed at or after the cut-off.

export interface SensorEntry {
  sensor: Item;
  registers: RegisterRow[];
  changed: boolean;
}

export interface EquipmentEntry {
  kind: EquipmentKind;
  equipment: Item;
  /** In role order; register null for an unconfigured role. */
  roles: { role: string; register: RegisterRow | null }[];
  /** Registers of the equipment's sensors: sensors by id, registers by position. */
  sensorRegisters: RegisterRow[];
  changed: boolean;
}

const ID_FIELD: Record<EquipmentKind, string> = { meter: 'SiteFlowMeterID', pump: 'SitePumpID', tank: 'SiteTankGroupID' };
const LIST: Record<EquipmentKind, 'meters' | 'pumps' | 'tanks'> = { meter: 'meters', pump: 'pumps', tank: 'tanks' };

export class ConfigIndex {
  readonly registers = new Map<string, RegisterRow>();
  private readonly bySensor = new Map<number, RegisterRow[]>();
  private readonly sensors = new Map<number, Item>();
  /** `typeCode:equipmentId` -> ids of the sensors attached to that equipment. */
  private readonly attached = new Map<string, number[]>();

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
  }

  registersOfSensor(sensorId: number): RegisterRow[] {
    return this.bySensor.get(sensorId) ?? [];
  }

  sensorEntries(): SensorEntry[] {
    return this.data.sensors.map((sensor) => {
      const registers = this.registersOfSensor(sensor.rec.SiteSensorID);
      return { sensor, registers, changed: sensor.changed || registers.some((r) => r.changed) };
    });
  }

  equipmentEntries(kind: EquipmentKind): EquipmentEntry[] {
    return this.data[LIST[kind]].map((e) => this.equipmentEntry(kind, e));
  }

  private equipmentEntry(kind: EquipmentKind, equipment: Item): EquipmentEntry {
    const id = equipment.rec[ID_FIELD[kind]] as number;
    const roles = (this.data.roles.get(`${kind}:${id}`) ?? []).map(({ role, registerId }) => ({
      role,
      register: registerId === null ? null : (this.registers.get(registerId) ?? null),
    }));
    const sensorIds = new Set(this.attached.get(`${EQUIPMENT_TABLES[kind].typeId}:${id}`) ?? []);
    const own = kind === 'meter' ? (equipment.rec.SiteSensorID as number | null) : null;
    if (own !== null && this.sensors.has(own)) sensorIds.add(own);
    const ordered = [...sensorIds].sort((a, b) => a - b);
    const sensorRegisters = ordered.flatMap((s) => this.registersOfSensor(s));
    const changed =
      equipment.changed ||
      roles.some((r) => r.register?.changed) ||
      sensorRegisters.some((r) => r.changed) ||
      ordered.some((s) => this.sensors.get(s)!.changed);
    return { kind, equipment, roles, sensorRegisters, changed };
  }

  /** The one entry of a by-id load (loadEquipment); undefined if it vanished meanwhile. */
  onlyEquipment(kind: EquipmentKind): EquipmentEntry | undefined {
    return this.equipmentEntries(kind)[0];
  }
}

/** On an /updates path, only what changed; otherwise everything. */
export const changedOnly = <T extends { changed: boolean }>(list: T[], updates: boolean): T[] =>
  updates ? list.filter((e) => e.changed) : list;

/** By-id /updates paths: the entry's registers that changed themselves (or through their device). */
export function changedRegisters(entry: EquipmentEntry): EquipmentEntry {
  return {
    ...entry,
    roles: entry.roles.filter((r) => r.register?.changed),
    sensorRegisters: entry.sensorRegisters.filter((r) => r.changed),
  };
}
