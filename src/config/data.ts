import type { AttachKind, TelemetryKind } from '../equipment.js';
import type { Row } from '../db/index.js';
import * as records from '../schemas/records.js';
import type { Field } from '../schemas/records.js';

// What the configuration read API loads: rows in their interface shape; `stamp` (ms) is when the
// import last changed them, which the /updates paths compare with their startDate.

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
  /** The meters, pumps and tank groups, each kind by id. */
  equipment: Record<AttachKind, Item[]>;
  /** `kind:id` -> roles in their order; registerId null for an unconfigured role. */
  roles: Map<string, { role: string; registerId: string | null }[]>;
  actuators: ActuatorRows;
  /** When links last changed (table config_link_changes): a register of a list (role null) or a role. */
  linkChanges: LinkChange[];
}

export interface LinkChange {
  kind: TelemetryKind;
  id: number;
  role: string | null;
  registerId: string | null;
  stamp: number;
}

/** The fields of each attachable kind's interface record (its table and id column are the registry's). */
export const ATTACHED_FIELDS: Record<AttachKind, Field[]> = {
  meter: records.FLOW_METER,
  pump: records.PUMP,
  tank: records.TANK_GROUP,
};

/** Nothing: what the by-id loads start from. */
export const emptyConfig = (): ConfigData => ({
  devices: [],
  registers: [],
  sensors: [],
  equipment: { meter: [], pump: [], tank: [] },
  roles: new Map(),
  actuators: { actuators: [], scalings: [], triggers: [], connections: [] },
  linkChanges: [],
});
