import { EQUIPMENT } from '../equipment.js';
import type { Database } from '../db/index.js';
import { parseAlarm, storeAlarms, type AlarmInput } from './send.js';
import { markResolved } from './store.js';

// A few alarms for the demo sites, some still active and some resolved, written through the same
// functions as the alarm routes (so they dedupe and count like real sends).

type Equipment = 'pump' | 'tank' | 'meter' | 'sensor' | null;
interface DemoAlarm {
  on: Equipment;
  alarmType: string;
  severity: AlarmInput['severity'];
  message: string;
  value?: number;
  /** One send per entry, minutes before now. */
  sends: number[];
  resolvedNote?: string;
}

/** Per demo site, in site order (sites beyond the list get none). */
const PLAN: DemoAlarm[][] = [
  [
    {
      on: 'pump',
      alarmType: 'HighDischargePressure',
      severity: 'critical',
      message: 'Discharge pressure above 1450 psi',
      value: 1482,
      sends: [55, 40, 25, 10],
    },
    {
      on: 'tank',
      alarmType: 'TankHighLevel',
      severity: 'major',
      message: 'Skim tank level above 16.5 ft',
      value: 16.8,
      sends: [30],
    },
    {
      on: 'sensor',
      alarmType: 'H2SHigh',
      severity: 'warning',
      message: 'H2S above 10 ppm',
      value: 11.2,
      sends: [600, 590],
      resolvedNote: 'Sensor recalibrated',
    },
  ],
  [
    {
      on: 'pump',
      alarmType: 'PumpTrip',
      severity: 'major',
      message: 'Injection pump tripped on motor overload',
      sends: [15],
    },
    {
      on: null,
      alarmType: 'CommunicationLost',
      severity: 'minor',
      message: 'No data from the RTU for 10 minutes',
      sends: [240],
      resolvedNote: 'Radio link restored',
    },
  ],
  [
    {
      on: 'meter',
      alarmType: 'LowFlow',
      severity: 'info',
      message: 'Flow below 1000 bbl/d',
      value: 812.5,
      sends: [90, 60],
    },
    {
      on: 'tank',
      alarmType: 'TankOverflow',
      severity: 'critical',
      message: 'Tank overflow switch tripped',
      sends: [1500],
      resolvedNote: 'Valve closed, level back to normal',
    },
  ],
];

export async function seedDemoAlarms(db: Database, now = Date.now()): Promise<void> {
  const sites = await db.query<{
    site_id: number;
    pump: number | null;
    tank: number | null;
    meter: number | null;
    sensor: number | null;
  }>(
    `SELECT s.site_id,
            (SELECT min(pump_id) FROM pumps WHERE site_id = s.site_id) AS pump,
            (SELECT min(tank_group_id) FROM tank_groups WHERE site_id = s.site_id) AS tank,
            (SELECT min(meter_id) FROM flow_meters WHERE site_id = s.site_id) AS meter,
            (SELECT min(sensor_id) FROM sensors WHERE site_id = s.site_id) AS sensor
       FROM sites s ORDER BY s.site_id LIMIT $1`,
    [PLAN.length],
  );
  await db.transaction(async (tx) => {
    for (const [i, site] of sites.entries()) {
      for (const alarm of PLAN[i]) {
        const equipmentId = alarm.on && site[alarm.on];
        if (alarm.on && !equipmentId) continue;
        const sends = alarm.sends.map((minutes, n) => {
          const input: AlarmInput = {
            ...(alarm.on ? { [EQUIPMENT[alarm.on].idField]: equipmentId } : {}),
            alarmType: alarm.alarmType,
            severity: alarm.severity,
            message: alarm.message,
            value: alarm.value ?? null,
            timestamp: new Date(now - minutes * 60_000).toISOString(),
          };
          return parseAlarm(input, n, '', now);
        });
        const [sent] = await storeAlarms(tx, site.site_id, sends);
        if (alarm.resolvedNote)
          await markResolved(
            tx,
            site.site_id,
            [{ id: sent.SiteAlarmLogID, note: alarm.resolvedNote }],
            'demo',
          );
      }
    }
  });
}
