import { EQUIPMENT } from '../equipment.js';
import type { Database } from '../db/index.js';
import { parseAlarm, storeAlarms, type AlarmInput } from './send.js';
import { markResolved } from './store.js';
import { DEMO_STORY } from '../telemetry/demo.js';
import { TELEMETRY_KINDS } from '../equipment.js';
import { evaluateStoredLogs } from './rules/evaluator.js';
import { checkCommunicationLoss } from './rules/comm-loss.js';

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

/**
 * Per demo site, in site order (sites beyond the list get none). Each agrees with the demo history
 * (src/telemetry/demo.ts): the first site's H2S reading of ten hours ago, the second site's pump that
 * tripped DEMO_STORY.tripMinutesAgo. The high discharge pressure, the low flow after the trip and
 * the third site's communication loss are raised by the service itself (seedDemoRuleAlarms).
 */
const PLAN: DemoAlarm[][] = [
  [
    {
      on: 'sensor',
      alarmType: 'H2SHigh',
      severity: 'warning',
      message: 'H2S above 10 ppm',
      value: 11.2,
      sends: [DEMO_STORY.h2sSpike[0] - 5, DEMO_STORY.h2sSpike[1] + 5],
      resolvedNote: 'Sensor checked with a hand-held monitor; leak at the separator fixed',
    },
  ],
  [
    {
      on: 'pump',
      alarmType: 'PumpTrip',
      severity: 'major',
      message: 'Injection pump tripped on motor overload',
      sends: [DEMO_STORY.tripMinutesAgo],
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
            (SELECT min(sensor_id) FROM sensors WHERE site_id = s.site_id AND site_sensor_type_id = 5) AS sensor
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

/** Hours of the demo history the limit rules are evaluated on at the first start. */
const RULE_HOURS = 3;

/**
 * The alarms the service raises itself from the demo history: its limit rules evaluated on the last
 * RULE_HOURS of their equipment's logs (as if those had just been uploaded), then one communication-
 * loss check, which finds the site whose data stopped. Returns the alarms raised or resolved.
 */
export async function seedDemoRuleAlarms(db: Database, now = Date.now()): Promise<number> {
  const equipment = (
    await db.query<{ kind: string; id: number }>(
      `SELECT DISTINCT kind, equipment_id AS id FROM alarm_rules WHERE enabled ORDER BY 1, 2`,
    )
  ).filter((e): e is { kind: (typeof TELEMETRY_KINDS)[number]; id: number } =>
    (TELEMETRY_KINDS as readonly string[]).includes(e.kind),
  );
  const changed = await db.transaction((tx) =>
    evaluateStoredLogs(tx, equipment, { from: now - RULE_HOURS * 3_600_000, to: now }, now),
  );
  const { raised } = await checkCommunicationLoss(db);
  return changed + raised;
}
