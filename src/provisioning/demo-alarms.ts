import type { DemoDocument } from './demo-site.js';

// The demo's alarm management (docs/alarms.md#demo-data): limit rules on the first three sites, a
// shorter communication-loss threshold on the third (the one whose history stops early, see
// src/telemetry/demo.ts), and a policy that sends critical alarms to a webhook channel whose
// address can never resolve (the reserved top-level domain .invalid, RFC 2606), so a newcomer sees
// how notifications work without any alarm leaving the machine.

/** The demo's webhook channel: a reserved name that never resolves. */
export const DEMO_WEBHOOK_URL = 'https://alarms.example.invalid/site-monitor';
/** Minutes of silence after which the third demo site is in communication loss. */
export const DEMO_COMM_LOSS_MINUTES = 30;

/** Adds the rules, the comm-loss threshold, the channel and the policy to a generated document. */
export function addDemoAlarmManagement(doc: DemoDocument, idBase = 0): void {
  const sites = doc.sites.slice(0, 3).map((s) => s.SiteID);
  const first = <T extends { SiteID: number }>(list: T[], site: number | undefined) =>
    list.find((x) => x.SiteID === site);
  const [one, two, three] = sites;
  const pump1 = first(doc.pumps, one);
  const tank1 = first(doc.tankGroups, one);
  const meter2 = first(doc.flowMeters, two);
  const h2s2 = doc.sensors.find((s) => s.SiteID === two && s.SiteSensorTypeID === 5);
  const temp3 = doc.sensors.find((s) => s.SiteID === three && s.SiteSensorTypeID === 3);
  let n = 0;
  const rule = (r: Record<string, unknown>) =>
    doc.alarmRules.push({ AlarmRuleID: idBase + ++n, ...r } as DemoDocument['alarmRules'][number]);
  if (pump1)
    rule({
      SitePumpID: pump1.SitePumpID,
      Field: 'pressure',
      Condition: 'above',
      Limit: 1050,
      Deadband: 50,
      DelaySeconds: 120,
      AlarmType: 'HighDischargePressure',
      Severity: 'critical',
      Message: `${pump1.Name}: discharge pressure above 1050 psi`,
    });
  if (tank1)
    rule({
      SiteTankGroupID: tank1.SiteTankGroupID,
      Field: 'entryTankLevel',
      Condition: 'above',
      Limit: 15,
      Deadband: 1,
      AlarmType: 'TankHighLevel',
      Severity: 'major',
      Message: `${tank1.Name}: level above 15 ft, call a truck`,
    });
  if (meter2)
    rule({
      SiteFlowMeterID: meter2.SiteFlowMeterID,
      Field: 'flowRate',
      Condition: 'below',
      Limit: 1000,
      Deadband: 200,
      DelaySeconds: 600,
      AlarmType: 'LowFlow',
      Severity: 'minor',
      Message: `${meter2.Name}: flow below 1000 bbl/d for 10 minutes`,
    });
  if (h2s2)
    rule({
      SiteSensorID: h2s2.SiteSensorID,
      Condition: 'above',
      Limit: 10,
      Deadband: 2,
      DelaySeconds: 30,
      AlarmType: 'H2SHigh',
      Severity: 'critical',
      Message: `${h2s2.Name}: H2S above 10 ppm`,
    });
  if (temp3)
    rule({
      SiteSensorID: temp3.SiteSensorID,
      Condition: 'above',
      Limit: 140,
      Deadband: 5,
      DelaySeconds: 300,
      AlarmType: 'HighFluidTemperature',
      Severity: 'warning',
      Enabled: false,
    });
  const silent = doc.sites.find((s) => s.SiteID === three);
  if (silent) silent.CommLossMinutes = DEMO_COMM_LOSS_MINUTES;
  doc.notificationChannels.push({
    ChannelID: 'demo-webhook',
    Type: 'webhook',
    Url: DEMO_WEBHOOK_URL,
    Secret: 'demo-signing-key-not-a-secret',
  });
  doc.notificationPolicies.push({
    PolicyID: 'demo-critical',
    SiteIDs: '*',
    MinSeverity: 'critical',
    Steps: [
      { AfterMinutes: 0, ChannelIDs: ['demo-webhook'] },
      { AfterMinutes: 30, ChannelIDs: ['demo-webhook'] },
    ],
    RepeatMinutes: 0,
  });
}
