import type { ProvisioningDocument } from './document.js';

// One site of the demo document under construction: its id scheme, its Modbus devices, and the
// registers and sensors every other piece of equipment adds as it is made.

/** The demo document: every list but clients. */
export type DemoDocument = Required<Omit<ProvisioningDocument, 'clients'>>;

export const SENSOR_TYPES = [
  { name: 'Discharge Pressure', units: 'psi', type: 1 },
  { name: 'Suction Pressure', units: 'psi', type: 6 },
  { name: 'Tank Level', units: 'ft', type: 2 },
  { name: 'Fluid Temperature', units: 'degF', type: 3 },
  { name: 'Injection Rate', units: 'bbl/d', type: 4 },
  { name: 'H2S Concentration', units: 'ppm', type: 5 },
];
export type SensorType = (typeof SENSOR_TYPES)[number];
/** The sensor that reports an actuator's (a valve's) position. */
export const VALVE_POSITION: SensorType = { name: 'Valve Position', units: '%', type: 7 };

/** The generator's draws, in one order: the same options give the same document. */
export interface Draws {
  rnd: () => number;
  pick: <T>(xs: T[]) => T;
  round: (v: number, d?: number) => number;
  /** Anchor of the generated times, in ms. */
  now: number;
}

export interface DemoSite extends Draws {
  doc: DemoDocument;
  /** 1-based number of the site in the document. */
  s: number;
  siteId: number;
  lat: number;
  lon: number;
  /** An equipment id of this site; equipment ids are unique across sites. */
  id: (n: number) => number;
  devices: { id: number; name: string; slave: number }[];
  /** Ids of the site's sensors, in the order they were added. */
  sensors: number[];
  /** Adds a register (on the site's devices in turn) and returns its id. */
  addRegister: (name: string, units: string | null) => string;
  /** Adds a sensor (and its registers); `equipment` is [EquipmentTypeID, EquipmentID]. */
  addSensor: (kind: SensorType, label: string, equipment?: [number, number]) => number;
}

/** Starts a site: its two Modbus devices, and the register and sensor makers of the site. */
export function startSite(
  doc: DemoDocument,
  draws: Draws,
  s: number,
  siteId: number,
  coords: { lat: number; lon: number },
): DemoSite {
  const { rnd, pick } = draws;
  const { lat, lon } = coords;
  const id = (n: number) => siteId * 10_000 + n;
  const devices = [
    { id: id(1), name: `PLC-${s}`, slave: 1 },
    { id: id(2), name: `RTU-${s}`, slave: 2 },
  ];
  for (const d of devices)
    doc.modbusDevices.push({
      SiteModbusInOutDeviceID: d.id,
      SiteID: siteId,
      DeviceName: d.name,
      SlaveAddress: d.slave,
      IPAddress: `10.${s % 250}.0.${d.slave + 10}`,
      Active: true,
      SupportedIOProtocolID: 1,
    });
  let reg = 0;
  const addRegister = (name: string, units: string | null, device = devices[reg % 2]) => {
    reg++;
    const registerId = String(BigInt(siteId) * 10_000_000_000n + BigInt(reg));
    doc.registers.push({
      SiteIODeviceRegisterID: registerId,
      SiteModbusInOutDeviceID: device.id,
      Register: 40001 + reg * 2,
      RegisterDataType: pick([1, 2, 3]),
      RegisterSize: 2,
      RegisterClassification: pick([1, 2]),
      RegisterAccessType: 1,
      BitIndex: null,
      ScalingMultiplierValue: 1,
      ScalingDividerValue: pick([1, 10, 100]),
      ScalingEquation: null,
      WriteScalingEquation: null,
      Units: units,
      UnitID: null,
      Name: name,
      Description: `${name} (${device.name})`,
      Deleted: false,
    });
    return registerId;
  };

  const sensors: number[] = [];
  let sensorNo = 0;
  const addSensor = (kind: SensorType, label: string, equipment?: [number, number]) => {
    const n = sensorNo++;
    const sensorId = id(100 + n);
    sensors.push(sensorId);
    doc.sensors.push({
      SiteSensorID: sensorId,
      SiteID: siteId,
      Name: label,
      Units: kind.units,
      Active: true,
      ConvertedUnits: null,
      SiteSensorTypeID: kind.type,
      SiteSensorSubTypeID: null,
      AlarmEnabled: rnd() < 0.7,
      LoggingEnabled: true,
      UnitID: null,
      ConvertedUnitID: null,
      EquipmentID: equipment ? String(equipment[1]) : null,
      EquipmentTypeID: equipment ? equipment[0] : null,
      Latitude: lat,
      Longitude: lon,
      RegisterIDs: [
        addRegister(`${label} raw`, kind.units),
        ...(n % 3 === 0 ? [addRegister(`${label} alarm bit`, null)] : []),
      ],
    });
    return sensorId;
  };
  return {
    ...draws,
    doc,
    s,
    siteId,
    lat,
    lon,
    id,
    devices,
    sensors,
    addRegister: (name, units) => addRegister(name, units),
    addSensor,
  };
}
