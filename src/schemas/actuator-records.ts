import { fields } from './record-fields.js';

// The actuator and the records that belong to it (interface §2.7): its sensor scalings, its sensor
// triggers and its tank group connections.

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
