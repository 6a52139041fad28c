import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import {
  BigIdInput,
  BigIdString,
  DateTimeInput,
  DateTimeOutput,
  IntId,
  Nullable,
} from './common.js';

// The interface's configuration records (interface §2), each field once: its name, its column and
// its type. Provisioning (write) and the configuration routes (read) both derive from these lists.

export type FieldKind = 'int' | 'bigint' | 'float' | 'bool' | 'text' | 'time';
export interface Field {
  name: string;
  column: string;
  kind: FieldKind;
  required: boolean;
}

const SQL_TYPE: Record<FieldKind, string> = {
  int: 'integer',
  bigint: 'bigint',
  float: 'double precision',
  bool: 'boolean',
  text: 'text',
  time: 'timestamptz',
};
export const sqlType = (k: FieldKind) => SQL_TYPE[k];

/** Builds a field list from `Name:column:kind` specs; a trailing `!` marks a required field. */
function fields(...specs: string[]): Field[] {
  return specs.map((s) => {
    const required = s.endsWith('!');
    const [name, column, kind] = (required ? s.slice(0, -1) : s).split(':');
    return { name, column, kind: kind as FieldKind, required };
  });
}

export const REGISTER = fields(
  'SiteIODeviceRegisterID:register_id:bigint!',
  'SiteModbusInOutDeviceID:device_id:int!',
  'Register:register:int!',
  'RegisterDataType:register_data_type:int!',
  'RegisterSize:register_size:int!',
  'RegisterClassification:register_classification:int!',
  'RegisterAccessType:register_access_type:int',
  'BitIndex:bit_index:int',
  'ScalingMultiplierValue:scaling_multiplier_value:float',
  'ScalingDividerValue:scaling_divider_value:float',
  'ScalingEquation:scaling_equation:text',
  'WriteScalingEquation:write_scaling_equation:text',
  'Units:units:text',
  'UnitID:unit_id:int',
  'Name:name:text',
  'Description:description:text',
  'Deleted:deleted:bool',
);

export const MODBUS_DEVICE = fields(
  'SiteModbusInOutDeviceID:device_id:int!',
  'SiteID:site_id:int!',
  'DeviceName:device_name:text!',
  'SlaveAddress:slave_address:int!',
  'IPAddress:ip_address:text',
  'Active:active:bool',
  'SupportedIOProtocolID:supported_io_protocol_id:int',
  'LastCommunication:last_communication:time',
);

export const SENSOR = fields(
  'SiteSensorID:sensor_id:int!',
  'SiteID:site_id:int!',
  'Name:name:text!',
  'Units:units:text!',
  'Active:active:bool!',
  'ConvertedUnits:converted_units:text',
  'SiteSensorTypeID:site_sensor_type_id:int',
  'SiteSensorSubTypeID:site_sensor_sub_type_id:int',
  'AlarmEnabled:alarm_enabled:bool',
  'LoggingEnabled:logging_enabled:bool',
  'UnitID:unit_id:int',
  'ConvertedUnitID:converted_unit_id:int',
  'EquipmentID:equipment_id:bigint',
  'EquipmentTypeID:equipment_type_id:int',
  'Latitude:latitude:float',
  'Longitude:longitude:float',
);

export const FLOW_METER = fields(
  'SiteFlowMeterID:meter_id:int!',
  'SiteID:site_id:int!',
  'Name:name:text!',
  'VolumeUnits:volume_units:text',
  'FlowUnits:flow_units:text',
  'VolumeUnitID:volume_unit_id:int',
  'MeterTypeID:meter_type_id:int',
  'SiteSensorID:site_sensor_id:int',
  'SiteFluidTypeID:site_fluid_type_id:int',
  'LoggingEnabled:logging_enabled:bool',
  'Latitude:latitude:float',
  'Longitude:longitude:float',
);

export const PUMP = fields(
  'SitePumpID:pump_id:int!',
  'SiteID:site_id:int!',
  'Name:name:text!',
  'IsVFD:is_vfd:bool!',
  'Active:active:bool!',
  'MaximumFrequency:maximum_frequency:float!',
  'MinimumFrequency:minimum_frequency:float!',
  'MaximumFlow:maximum_flow:float!',
  'MinimumFlow:minimum_flow:float!',
  'SitePumpTypeID:site_pump_type_id:int',
  'LoggingEnabled:logging_enabled:bool',
  'DesignTypeID:design_type_id:int',
  'Latitude:latitude:float',
  'Longitude:longitude:float',
);

export const TANK_GROUP = fields(
  'SiteTankGroupID:tank_group_id:int!',
  'SiteID:site_id:int!',
  'Name:name:text!',
  'Capacity:capacity:float!',
  'MaximumHeightLevel:maximum_height_level:float!',
  'MinimumHeightLevel:minimum_height_level:float!',
  'NumberOfTanks:number_of_tanks:int!',
  'IsOil:is_oil:bool!',
  'SiteTankGroupTypeID:site_tank_group_type_id:int!',
  'Active:active:bool!',
  'VolumeUnitID:volume_unit_id:int',
  'LoggingEnabled:logging_enabled:bool',
  'Latitude:latitude:float',
  'Longitude:longitude:float',
);

export const ACTUATOR = fields(
  'SiteActuatorID:actuator_id:int!',
  'SiteID:site_id:int!',
  'SiteActuatorStatusID:site_actuator_status_id:int!',
  'Name:name:text!',
  'FullyClosedChannel:fully_closed_channel:int!',
  'FullyOpenChannel:fully_open_channel:int!',
  'CloseChannel:close_channel:int!',
  'OpenChannel:open_channel:int!',
  'DigitalInMissingAlarmActive:digital_in_missing_alarm_active:bool!',
  'DigitalInMissingAlarmDescription:digital_in_missing_alarm_description:text!',
  'Auto:auto:bool!',
  'LoggingEnabled:logging_enabled:bool',
  'SiteInOutDeviceID:site_in_out_device_id:int',
  'SiteModbusInOutDeviceID:site_modbus_in_out_device_id:int',
  'UsesAnalogControl:uses_analog_control:bool',
  'AnalogOutChannel:analog_out_channel:int',
  'AnalogOutSiteModbusInOutDeviceID:analog_out_site_modbus_in_out_device_id:int',
  'AnalogInValvePositionChannel:analog_in_valve_position_channel:int',
  'AnalogInSiteModbusInOutDeviceID:analog_in_site_modbus_in_out_device_id:int',
  'FullyOpenPosition:fully_open_position:float',
  'FullyClosedPosition:fully_closed_position:float',
  'DigitalOpenValveRegisterID:digital_open_valve_register_id:bigint',
  'DigitalCloseValveRegisterID:digital_close_valve_register_id:bigint',
  'DigitalFullyOpenValveRegisterID:digital_fully_open_valve_register_id:bigint',
  'DigitalFullyClosedValveRegisterID:digital_fully_closed_valve_register_id:bigint',
  'AnalogOpenValveRegisterID:analog_open_valve_register_id:bigint',
  'AnalogValvePositionRegisterID:analog_valve_position_register_id:bigint',
  'AnalogValvePositionSensorID:analog_valve_position_sensor_id:int',
  'CurrentValvePosition:current_valve_position:float',
  'LastClosed:last_closed:time',
  'LastOpened:last_opened:time',
  'ESDState:esd_state:int',
  'ESDCustomPosition:esd_custom_position:float',
  'MonitorStatusIndicators:monitor_status_indicators:bool',
  'MaxTimeToFullyOpen:max_time_to_fully_open:float',
  'MaxTimeToFullyClose:max_time_to_fully_close:float',
  'DefaultAction:default_action:int',
  'DefaultPosition:default_position:float',
  'Delete:delete:bool',
  'DesignTypeID:design_type_id:int',
  'Latitude:latitude:float',
  'Longitude:longitude:float',
  'CustomIconURL:custom_icon_url:text',
);
/** Actuator fields that light responses leave out (interface §2.7). */
export const ACTUATOR_HEAVY_FIELDS = [
  'LoggingEnabled',
  'CurrentValvePosition',
  'LastClosed',
  'LastOpened',
  'DesignTypeID',
  'Latitude',
  'Longitude',
  'CustomIconURL',
];

export const SENSOR_SCALING = fields(
  'SiteActuatorSensorScalingID:scaling_id:int!',
  'SiteActuatorID:actuator_id:int!',
  'SiteSensorID:sensor_id:int!',
  'Active:active:bool!',
);

export const SENSOR_TRIGGER = fields(
  'SiteActuatorID:actuator_id:int!',
  'SiteSensorID:sensor_id:int!',
  'TopAlarmActuatorAction:top_alarm_actuator_action:int!',
  'TopAlarmCustomPosition:top_alarm_custom_position:float!',
  'BottomAlarmActuatorAction:bottom_alarm_actuator_action:int!',
  'BottomAlarmCustomPosition:bottom_alarm_custom_position:float!',
  'TimeBased:time_based:bool!',
  'Active:active:bool!',
  'TopAlarmActionActiveTime:top_alarm_action_active_time:float',
  'TopAlarmActionInactiveTime:top_alarm_action_inactive_time:float',
  'BottomAlarmActionActiveTime:bottom_alarm_action_active_time:float',
  'BottomAlarmActionInactiveTime:bottom_alarm_action_inactive_time:float',
);

export const TANK_GROUP_CONNECTION = fields(
  'SiteActuatorTankGroupConnectionID:connection_id:int!',
  'SiteActuatorID:actuator_id:int!',
  'SiteTankGroupID:tank_group_id:int!',
  'LevelToOpen:level_to_open:float!',
  'LevelToClose:level_to_close:float!',
  'LevelToAlertClose:level_to_alert_close:float!',
  'Active:active:bool!',
  'SiteMiddleTankID:site_middle_tank_id:int',
);

export const COMPANY = fields('CompanyID:company_id:int!', 'Name:name:text!');

export const SITE = fields(
  'SiteID:site_id:int!',
  'Name:name:text!',
  'CompanyID:company_id:int!',
  'ProjectID:project_id:int',
  'Active:active:bool!',
  'Latitude:latitude:float',
  'Longitude:longitude:float',
  'TimeZone:time_zone:text',
);

export const CAMERA = fields('CameraID:camera_id:int!', 'SiteID:site_id:int!', 'Name:name:text!');

export const TRANSACTION = fields(
  'TransactionID:transaction_id:int!',
  'TicketNumber:ticket_number:int!',
  'SiteID:site_id:int!',
  'TransactionDate:transaction_date:time!',
  'HaulerCompany:hauler_company:text',
  'DriverName:driver_name:text',
  'TruckNumber:truck_number:text',
  'FluidType:fluid_type:text',
  'Volume:volume:float',
  'VolumeUnits:volume_units:text',
  'Notes:notes:text',
);

const INT32 = { minimum: -2_147_483_648, maximum: 2_147_483_647 };

/**
 * Every field named …ID is an id (the record's own, one it names, a lookup code): positive on input.
 * Output is as stored.
 */
const isId = (f: Field) => f.name.endsWith('ID');

function typeOf(kind: FieldKind, dir: 'in' | 'out', id: boolean): TSchema {
  switch (kind) {
    case 'int':
      return dir === 'in' && id ? IntId : Type.Integer(INT32);
    case 'bigint':
      return dir === 'in' ? BigIdInput : BigIdString;
    case 'float':
      return Type.Number();
    case 'bool':
      return Type.Boolean();
    case 'text':
      return Type.String({ maxLength: 4000 });
    case 'time':
      return dir === 'in' ? DateTimeInput : DateTimeOutput;
  }
}

/**
 * The TypeBox object of a record. 'in': what provisioning accepts (optional fields may be absent or null).
 * 'out': a full response record (every field present, nulls included).
 */
export function recordSchema(list: Field[], dir: 'in' | 'out', title?: string): TObject {
  const props: Record<string, TSchema> = {};
  for (const f of list) {
    const t = typeOf(f.kind, dir, isId(f));
    props[f.name] = f.required ? t : dir === 'in' ? Type.Optional(Nullable(t)) : Nullable(t);
  }
  return Type.Object(props, title ? { title } : {});
}

/** `col AS "Name", …` for reading records straight into their interface shape. */
export function selectList(list: Field[], alias: string): string {
  return list
    .map((f) => `${alias}.${f.column === 'delete' ? '"delete"' : f.column} AS "${f.name}"`)
    .join(', ');
}
