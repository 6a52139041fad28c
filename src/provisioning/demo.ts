import { makePng } from './png.js';
import type { ProvisioningDocument } from './document.js';

// A realistic provisioning document: the demo data set of a fresh database, and a test and
// benchmark fixture (sizes and id offsets are parameters, so tests can import a second set).

export interface DemoOptions {
  /** Added to every id, so two generated documents do not collide. */
  idBase?: number;
  sites?: number;
  sensorsPerSite?: number;
  metersPerSite?: number;
  pumpsPerSite?: number;
  tanksPerSite?: number;
  actuatorsPerSite?: number;
  transactionsPerSite?: number;
  imagesPerSite?: number;
  /** Anchor of the generated transaction dates (the newest is a few hours before it). */
  now?: Date;
}

const COMPANY_NAMES = [
  'Permian Water Services',
  'Basin Midstream Partners',
  'Delaware Produced Water',
  'High Plains Gathering',
];
const SITE_NAMES = [
  'Pecos SWD 1',
  'Mentone Tank Battery',
  'Orla Gathering Station',
  'Kermit Disposal',
  'Wink Booster',
  'Jal Water Hub',
];
const SENSOR_TYPES = [
  { name: 'Discharge Pressure', units: 'psi', type: 1 },
  { name: 'Suction Pressure', units: 'psi', type: 1 },
  { name: 'Tank Level', units: 'ft', type: 2 },
  { name: 'Fluid Temperature', units: 'degF', type: 3 },
  { name: 'Injection Rate', units: 'bbl/d', type: 4 },
  { name: 'H2S Concentration', units: 'ppm', type: 5 },
];
const HAULERS = [
  'Lone Star Hauling',
  'Red Mesa Trucking',
  'Caprock Fluid Transport',
  'Sandhills Water Haulers',
];
const DRIVERS = ['J. Ortega', 'M. Reyes', 'T. Walker', 'D. Nguyen', 'R. Castillo', 'A. Brooks'];
const FLUIDS = ['Produced Water', 'Flowback', 'Fresh Water', 'Brine'];

/** Small deterministic generator, so the same options give the same document. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function generateDemo(
  opts: DemoOptions = {},
): Required<Omit<ProvisioningDocument, 'clients'>> {
  const base = opts.idBase ?? 0;
  const nSites = opts.sites ?? 4;
  const rnd = random(base + 7);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;
  const now = (opts.now ?? new Date()).getTime();
  const doc: Required<Omit<ProvisioningDocument, 'clients'>> = {
    companies: [],
    sites: [],
    modbusDevices: [],
    registers: [],
    sensors: [],
    flowMeters: [],
    pumps: [],
    tankGroups: [],
    actuators: [],
    cameras: [],
    transactions: [],
    images: [],
    sparkplugMetrics: [],
  };
  const nCompanies = Math.min(2, nSites);
  const companyName = (c: number) => COMPANY_NAMES[(c - 1) % COMPANY_NAMES.length];
  for (let c = 1; c <= nCompanies; c++)
    doc.companies.push({
      CompanyID: base + c,
      Name: companyName(c),
    });

  for (let s = 1; s <= nSites; s++) {
    const siteId = base + s;
    const id = (n: number) => siteId * 10_000 + n; // equipment ids are unique across sites
    const lat = round(31.4 + rnd() * 1.2, 5);
    const lon = round(-103.9 + rnd() * 1.5, 5);
    doc.sites.push({
      SiteID: siteId,
      Name: `${SITE_NAMES[(s - 1) % SITE_NAMES.length]}${s > SITE_NAMES.length ? ` ${s}` : ''}`,
      CompanyID: base + 1 + ((s - 1) % nCompanies),
      ProjectID: 100 + s,
      Active: s !== nSites || nSites < 3,
      Latitude: lat,
      Longitude: lon,
      TimeZone: 'America/Chicago',
    });
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
    const addSensor = (
      n: number,
      kind: (typeof SENSOR_TYPES)[number],
      label: string,
      equipment?: [number, number],
    ) => {
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
    let sensorNo = 0;
    for (let i = 0; i < (opts.sensorsPerSite ?? 6); i++) {
      const kind = SENSOR_TYPES[i % SENSOR_TYPES.length];
      addSensor(sensorNo++, kind, `${kind.name} ${Math.floor(i / SENSOR_TYPES.length) + 1}`);
    }
    for (let i = 1; i <= (opts.metersPerSite ?? 2); i++) {
      const meterId = id(300 + i);
      const pressure = addSensor(sensorNo++, SENSOR_TYPES[0], `Meter ${i} Line Pressure`, [
        1,
        meterId,
      ]);
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
    for (let i = 1; i <= (opts.pumpsPerSite ?? 2); i++) {
      const pumpId = id(400 + i);
      addSensor(sensorNo++, SENSOR_TYPES[0], `Pump ${i} Discharge`, [2, pumpId]);
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
    for (let i = 1; i <= (opts.tanksPerSite ?? 2); i++) {
      const tankId = id(500 + i);
      tanks.push(tankId);
      addSensor(sensorNo++, SENSOR_TYPES[2], `Tank Group ${i} Level`, [3, tankId]);
      doc.tankGroups.push({
        SiteTankGroupID: tankId,
        SiteID: siteId,
        Name: i === 1 ? 'Skim Tanks' : `Storage Tanks ${i}`,
        Capacity: 4_000 * (i + 1),
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
    for (let i = 1; i <= (opts.actuatorsPerSite ?? 1); i++) {
      const actId = id(600 + i);
      const position = addSensor(sensorNo++, SENSOR_TYPES[2], `Valve ${i} Position`, [4, actId]);
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
    const cameras = [id(701), id(702)];
    cameras.forEach((c, i) =>
      doc.cameras.push({ CameraID: c, SiteID: siteId, Name: i ? 'Offload Bay' : 'Gate' }),
    );

    const nTx = opts.transactionsPerSite ?? 30;
    for (let i = 1; i <= nTx; i++) {
      const txId = id(1000 + i);
      const when = new Date(now - (nTx - i) * 6 * 3_600_000 - Math.floor(rnd() * 3_600_000));
      const volume = round(80 + rnd() * 50, 1);
      doc.transactions.push({
        TransactionID: txId,
        TicketNumber: siteId * 100_000 + i,
        SiteID: siteId,
        TransactionDate: when.toISOString(),
        HaulerCompany: pick(HAULERS),
        DriverName: pick(DRIVERS),
        TruckNumber: `T-${100 + Math.floor(rnd() * 900)}`,
        FluidType: pick(FLUIDS),
        Volume: volume,
        VolumeUnits: 'bbl',
        Notes: rnd() < 0.2 ? 'Offloaded at bay 2' : null,
        Changes: [
          {
            LogTypeName: 'Main Ticket',
            LogType: 1,
            Editor: 'Field Operator',
            EditorCompany: companyName(1),
            ChangeDate: new Date(when.getTime() + 1_800_000).toISOString(),
            ChangeItems: [
              {
                PropertyName: 'Volume',
                OriginalValue: String(round(volume + 2.5, 1)),
                NewValue: String(volume),
              },
            ],
          },
          ...(i % 4 === 0
            ? [
                {
                  LogTypeName: 'Disposal Fee',
                  LogType: 4,
                  Editor: 'Billing Desk',
                  EditorCompany: companyName(1),
                  ChangeDate: new Date(when.getTime() + 7_200_000).toISOString(),
                  ChangeItems: [{ PropertyName: 'Rate', OriginalValue: '0.45', NewValue: '0.50' }],
                },
              ]
            : []),
        ],
      });
    }
    const nImages = Math.min(opts.imagesPerSite ?? 3, nTx);
    for (let i = 1; i <= nImages; i++) {
      const tx = doc.transactions[doc.transactions.length - i];
      const hex = (n: number) => n.toString(16).padStart(12, '0');
      doc.images.push({
        UUID: `7e1c0000-0000-4000-8000-${hex(siteId * 1000 + i)}`,
        Kind: 'ticket',
        SiteID: siteId,
        TransactionID: tx.TransactionID,
        CapturedAt: tx.TransactionDate,
        ContentType: 'image/png',
        DataBase64: makePng(48, 32, siteId + i).toString('base64'),
      });
      doc.images.push({
        UUID: `9a0f0000-0000-4000-8000-${hex(siteId * 1000 + i)}`,
        Kind: 'motion',
        SiteID: siteId,
        TransactionID: tx.TransactionID,
        CameraID: cameras[i % 2],
        CapturedAt: tx.TransactionDate,
        ContentType: 'image/png',
        DataBase64: makePng(64, 48, siteId * 7 + i).toString('base64'),
      });
    }
  }
  return doc;
}
