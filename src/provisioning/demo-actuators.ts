import { VALVE_POSITION, type DemoSite } from './demo-site.js';

// The demo site's actuators (inlet valves): their channels and registers, the sensor that reports
// the valve position, and their scalings, triggers and tank-group connections.

/** Adds `count` actuators to the site; they act on its first tank group. */
export function addActuators(site: DemoSite, count: number, tanks: number[]): void {
  const { doc, siteId, id, lat, lon, rnd, round, now, devices, sensors, addRegister, addSensor } =
    site;
  for (let i = 1; i <= count; i++) {
    const actId = id(600 + i);
    const position = addSensor(VALVE_POSITION, `Valve ${i} Position`, [4, actId]);
    const trigger = sensors[i % Math.max(1, sensors.length)];
    doc.actuators.push({
      SiteActuatorID: actId,
      SiteID: siteId,
      SiteActuatorStatusID: 1,
      Name: `Inlet Valve ${i}`,
      FullyClosedChannel: 1,
      FullyOpenChannel: 2,
      CloseChannel: 3,
      OpenChannel: 4,
      DigitalInMissingAlarmActive: true,
      DigitalInMissingAlarmDescription: 'Limit switch missing',
      Auto: true,
      LoggingEnabled: true,
      SiteInOutDeviceID: null,
      SiteModbusInOutDeviceID: devices[0].id,
      UsesAnalogControl: i % 2 === 0,
      AnalogOutChannel: 1,
      AnalogOutSiteModbusInOutDeviceID: devices[1].id,
      AnalogInValvePositionChannel: 2,
      AnalogInSiteModbusInOutDeviceID: devices[1].id,
      FullyOpenPosition: 100,
      FullyClosedPosition: 0,
      DigitalOpenValveRegisterID: addRegister(`Valve ${i} open cmd`, null),
      DigitalCloseValveRegisterID: addRegister(`Valve ${i} close cmd`, null),
      DigitalFullyOpenValveRegisterID: addRegister(`Valve ${i} open limit`, null),
      DigitalFullyClosedValveRegisterID: addRegister(`Valve ${i} closed limit`, null),
      AnalogOpenValveRegisterID: addRegister(`Valve ${i} setpoint`, '%'),
      AnalogValvePositionRegisterID: addRegister(`Valve ${i} feedback`, '%'),
      AnalogValvePositionSensorID: position,
      CurrentValvePosition: round(rnd() * 100, 1),
      LastClosed: new Date(now - 86_400_000).toISOString(),
      LastOpened: new Date(now - 3_600_000).toISOString(),
      ESDState: 0,
      ESDCustomPosition: 0,
      MonitorStatusIndicators: true,
      MaxTimeToFullyOpen: 90,
      MaxTimeToFullyClose: 90,
      DefaultAction: 1,
      DefaultPosition: 0,
      Delete: false,
      DesignTypeID: 1,
      Latitude: lat,
      Longitude: lon,
      CustomIconURL: null,
      SensorScalings: [
        {
          SiteActuatorSensorScalingID: actId * 10 + 1,
          SiteActuatorID: actId,
          SiteSensorID: position,
          Active: true,
          ScalePoints: [
            { F: 0, V: 4 },
            { F: 50, V: 12 },
            { F: 100, V: 20 },
          ],
        },
      ],
      SensorTriggers: [
        {
          SiteActuatorID: actId,
          SiteSensorID: trigger,
          TopAlarmActuatorAction: 2,
          TopAlarmCustomPosition: 0,
          BottomAlarmActuatorAction: 1,
          BottomAlarmCustomPosition: 100,
          TimeBased: false,
          Active: true,
          TopAlarmActionActiveTime: null,
          TopAlarmActionInactiveTime: null,
          BottomAlarmActionActiveTime: null,
          BottomAlarmActionInactiveTime: null,
        },
      ],
      TankGroupConnections: tanks.slice(0, 1).map((t) => ({
        SiteActuatorTankGroupConnectionID: actId * 10 + 1,
        SiteActuatorID: actId,
        SiteTankGroupID: t,
        LevelToOpen: 4,
        LevelToClose: 15,
        LevelToAlertClose: 16.5,
        Active: true,
        SiteMiddleTankID: null,
      })),
    });
  }
}
