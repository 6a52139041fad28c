import { SENSOR_TYPES, type DemoSite } from './demo-site.js';

// The demo site's telemetry equipment: flow meters, pumps and tank groups, each with the sensor
// that reports on it and the registers of its roles.

/** Adds the site's plain sensors, flow meters, pumps and tank groups; returns the tank group ids. */
export function addEquipment(
  site: DemoSite,
  counts: { sensors: number; meters: number; pumps: number; tanks: number },
): number[] {
  const { doc, siteId, id, lat, lon, pick, addRegister, addSensor } = site;
  for (let i = 0; i < counts.sensors; i++) {
    const kind = SENSOR_TYPES[i % SENSOR_TYPES.length];
    addSensor(kind, `${kind.name} ${Math.floor(i / SENSOR_TYPES.length) + 1}`);
  }
  for (let i = 1; i <= counts.meters; i++) {
    const meterId = id(300 + i);
    const pressure = addSensor(SENSOR_TYPES[0], `Meter ${i} Line Pressure`, [1, meterId]);
    doc.flowMeters.push({
      SiteFlowMeterID: meterId,
      SiteID: siteId,
      Name: `Meter Run ${i}`,
      VolumeUnits: 'bbl',
      FlowUnits: 'bbl/d',
      VolumeUnitID: 1,
      MeterTypeID: pick([1, 2]),
      SiteSensorID: pressure,
      SiteFluidTypeID: 1,
      LoggingEnabled: true,
      Latitude: lat,
      Longitude: lon,
      Registers: {
        TotalVolume: addRegister(`Meter ${i} total`, 'bbl'),
        FlowRate: addRegister(`Meter ${i} rate`, 'bbl/d'),
        DayVolume: addRegister(`Meter ${i} today`, 'bbl'),
        Reset: null,
      },
    });
  }
  for (let i = 1; i <= counts.pumps; i++) {
    const pumpId = id(400 + i);
    addSensor(SENSOR_TYPES[0], `Pump ${i} Discharge`, [2, pumpId]);
    const vfd = i % 2 === 1;
    doc.pumps.push({
      SitePumpID: pumpId,
      SiteID: siteId,
      Name: `Injection Pump ${i}`,
      IsVFD: vfd,
      Active: true,
      MaximumFrequency: vfd ? 60 : 0,
      MinimumFrequency: vfd ? 20 : 0,
      MaximumFlow: 12_000,
      MinimumFlow: 1_000,
      SitePumpTypeID: 1,
      LoggingEnabled: true,
      DesignTypeID: 1,
      Latitude: lat,
      Longitude: lon,
      Registers: {
        Running: addRegister(`Pump ${i} running`, null),
        Start: addRegister(`Pump ${i} start`, null),
        Stop: addRegister(`Pump ${i} stop`, null),
        Frequency: vfd ? addRegister(`Pump ${i} frequency`, 'Hz') : null,
        Fault: addRegister(`Pump ${i} fault`, null),
      },
    });
  }
  const tanks: number[] = [];
  for (let i = 1; i <= counts.tanks; i++) {
    const tankId = id(500 + i);
    tanks.push(tankId);
    addSensor(SENSOR_TYPES[2], `Tank Group ${i} Level`, [3, tankId]);
    doc.tankGroups.push({
      SiteTankGroupID: tankId,
      SiteID: siteId,
      Name: i === 1 ? 'Skim Tanks' : `Storage Tanks ${i}`,
      // 500-bbl tanks: a truckload (80-130 bbl) moves the level by a foot or so.
      Capacity: 500 * (2 + i),
      MaximumHeightLevel: 18,
      MinimumHeightLevel: 1.5,
      NumberOfTanks: 2 + i,
      IsOil: i === 1,
      SiteTankGroupTypeID: i === 1 ? 1 : 2,
      Active: true,
      VolumeUnitID: 1,
      LoggingEnabled: true,
      Latitude: lat,
      Longitude: lon,
      Registers: {
        EntryLevel: addRegister(`Tank ${i} entry level`, 'ft'),
        ExitLevel: addRegister(`Tank ${i} exit level`, 'ft'),
        Volume: addRegister(`Tank ${i} volume`, 'bbl'),
      },
    });
  }
  return tanks;
}
