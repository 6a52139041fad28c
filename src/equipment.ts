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
 * How the configuration paths name a kind beyond its path segment and name stem:
 * `/<pathSegment>/:<param>` and `/site/<pathSegment>`; operationIds and DTOs by the stem
 * (getMeterRegisters, MeterConfigDto), the role map `<stem>Registers` in lower case; `entry` keys
 * its record in a configuration entry, and `<entry>s` its list in a site's.
 */
export interface ConfigNames {
  param: string;
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
  /** The segment naming the kind in URLs: its summary download is POST /v1/<pathSegment>/logs/load. */
  pathSegment: 'sensors' | 'meters' | 'pumps' | 'tanks';
  /** The field of a download request that lists the kind's ids. */
  idsField: 'sensorIds' | 'meterIds' | 'pumpIds' | 'tankGroupIds';
  /** The stem of the kind's operationIds and DTO titles (loadSensorSummaries, SensorLogsLoadDto). */
  nameStem: 'Sensor' | 'Meter' | 'Pump' | 'Tank';
  /** Its configuration paths and documents (/v1/config/…). */
  config: ConfigNames;
}

const TELEMETRY = {
  sensor: {
    code: 1,
    table: 'sensors',
    idColumn: 'sensor_id',
    label: 'sensor',
    typeId: 5,
    idField: 'sensorID',
    list: 'sensors',
    listIdField: 'SiteSensorID',
    pathSegment: 'sensors',
    idsField: 'sensorIds',
    nameStem: 'Sensor',
    config: { param: 'sensorId', entry: 'sensor' },
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
    pathSegment: 'meters',
    idsField: 'meterIds',
    nameStem: 'Meter',
    config: { param: 'meterId', entry: 'meter' },
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
    pathSegment: 'pumps',
    idsField: 'pumpIds',
    nameStem: 'Pump',
    config: { param: 'pumpId', entry: 'pump' },
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
    pathSegment: 'tanks',
    idsField: 'tankGroupIds',
    nameStem: 'Tank',
    config: { param: 'tankGroupId', entry: 'tankGroup' },
  },
} as const satisfies Record<TelemetryKind, TelemetryKindInfo>;

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

/** A telemetry kind's entry with its literal types, for schemas keyed by its fields (idsField). */
export type TelemetryKindEntry<K extends TelemetryKind> = (typeof TELEMETRY)[K];
export const telemetryKind = <K extends TelemetryKind>(kind: K): TelemetryKindEntry<K> =>
  TELEMETRY[kind];

export const equipmentLabel = (kind: EquipmentKind) => EQUIPMENT[kind].label;
