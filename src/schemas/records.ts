import { fields } from './record-fields.js';

export * from './record-fields.js';
export * from './actuator-records.js';

// The interface's configuration records (interface §2), each field once: its name, its column and
// its type. Provisioning (write) and the configuration routes (read) both derive from these lists
// (record-fields.ts); the actuator's own records are in actuator-records.ts.

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
