// The one registry of equipment kinds: for each, its table and id column, its EquipmentTypeID (the
// type code alarms and sensor links name it by), the label messages use, and the id field its
// records carry (an upload's, an alarm's) and its provisioning list with that list's id field.
// Access checks, configuration, telemetry, alarms, the stream and the admin import read it here.

export type EquipmentKind = 'sensor' | 'meter' | 'pump' | 'tank' | 'actuator' | 'device' | 'camera';
/** The kinds that report telemetry (logs and readings) and can raise alarms. */
export type TelemetryKind = 'sensor' | 'meter' | 'pump' | 'tank';
/** The kinds a sensor can be attached to, each with configuration of its own. */
export type AttachKind = 'meter' | 'pump' | 'tank';

/**
 * How the configuration paths name a kind: `/<path>/:<param>` and `/site/<path>`; operationIds and
 * DTOs by `name` (getMeterRegisters, MeterConfigDto), the role map `<name>Registers` in lower case;
 * `entry` keys its record in a configuration entry, and `<entry>s` its list in a site's.
 */
export interface ConfigNames {
  path: string;
  param: string;
  name: string;
  entry: string;
}

export interface KindInfo {
  table: string;
  idColumn: string;
  label: string;
  /** EquipmentTypeID, where the interface gives the kind one. */
  typeId?: number;
  /** The provisioning document's list of this kind, and its records' id field. */
  list: string;
  listIdField: string;
}

export interface TelemetryKindInfo extends KindInfo {
  typeId: number;
  /** The service's own number for the kind (1–4): stored in rollup_dirty.kind and used for in-memory keys. */
  code: number;
  /** The id field of its upload records and alarms (also routes generic uploads). */
  idField: 'sensorID' | 'flowMeterID' | 'sitePumpID' | 'siteTankGroupID';
  /** Its configuration paths and documents (/v1/config/…). */
  config: ConfigNames;
}

const TELEMETRY: Record<TelemetryKind, TelemetryKindInfo> = {
  sensor: {
    code: 1,
    table: 'sensors',
    idColumn: 'sensor_id',
    label: 'sensor',
    typeId: 5,
    idField: 'sensorID',
    list: 'sensors',
    listIdField: 'SiteSensorID',
    config: { path: 'sensors', param: 'sensorId', name: 'Sensor', entry: 'sensor' },
  },
  meter: {
    code: 2,
    table: 'flow_meters',
    idColumn: 'meter_id',
    label: 'flow meter',
    typeId: 1,
    idField: 'flowMeterID',
    list: 'flowMeters',
    listIdField: 'SiteFlowMeterID',
    config: { path: 'meters', param: 'meterId', name: 'Meter', entry: 'meter' },
  },
  pump: {
    code: 3,
    table: 'pumps',
    idColumn: 'pump_id',
    label: 'pump',
    typeId: 2,
    idField: 'sitePumpID',
    list: 'pumps',
    listIdField: 'SitePumpID',
    config: { path: 'pumps', param: 'pumpId', name: 'Pump', entry: 'pump' },
  },
  tank: {
    code: 4,
    table: 'tank_groups',
    idColumn: 'tank_group_id',
    label: 'tank group',
    typeId: 3,
    idField: 'siteTankGroupID',
    list: 'tankGroups',
    listIdField: 'SiteTankGroupID',
    config: { path: 'tanks', param: 'tankGroupId', name: 'Tank', entry: 'tankGroup' },
  },
};

export const EQUIPMENT: Record<EquipmentKind, KindInfo> & Record<TelemetryKind, TelemetryKindInfo> =
  {
    ...TELEMETRY,
    actuator: {
      table: 'actuators',
      idColumn: 'actuator_id',
      label: 'actuator',
      list: 'actuators',
      listIdField: 'SiteActuatorID',
    },
    device: {
      table: 'modbus_devices',
      idColumn: 'device_id',
      label: 'Modbus device',
      list: 'modbusDevices',
      listIdField: 'SiteModbusInOutDeviceID',
    },
    camera: {
      table: 'cameras',
      idColumn: 'camera_id',
      label: 'camera',
      list: 'cameras',
      listIdField: 'CameraID',
    },
  };

export const TELEMETRY_KINDS = Object.keys(TELEMETRY) as TelemetryKind[];
export const ATTACH_KINDS = TELEMETRY_KINDS.filter((k): k is AttachKind => k !== 'sensor');

export const equipmentLabel = (kind: EquipmentKind) => EQUIPMENT[kind].label;
