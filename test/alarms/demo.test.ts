import { BlockList } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { buildApp } from '../../src/app.js';
import { upsertClient } from '../../src/auth/clients.js';
import { postWebhook } from '../../src/alarms/notify/webhook.js';
import { DEMO_COMM_LOSS_MINUTES, DEMO_WEBHOOK_URL } from '../../src/provisioning/demo-alarms.js';
import { seedDemo } from '../../src/provisioning/seed.js';
import { DEMO_STORY } from '../../src/telemetry/demo.js';
import { bearer, describeEachBackend, openTestDb, testSettings } from '../helper.js';
import { until } from '../wait.js';

// The demo data set shows alarm management at the first start: limit rules (one raised from the
// demo's own history), a site in communication loss, and a notification policy whose webhook goes
// nowhere. The whole seed runs here, as `npm start` runs it on a fresh database.

describeEachBackend('demo alarms', (backend) => {
  let db: Database;
  let app: Awaited<ReturnType<typeof buildApp>>;
  let token: string;
  beforeAll(async () => {
    db = await openTestDb(backend);
    await seedDemo(db);
    app = await buildApp(testSettings(), { db, logger: false });
    await app.ready();
    await upsertClient(db, { clientId: 'viewer', clientSecret: 'secret-123456', siteIds: '*' });
    const res = await app.inject({
      method: 'POST',
      url: '/token',
      payload: { clientId: 'viewer', clientSecret: 'secret-123456' },
    });
    token = res.json().accessToken;
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const sites = async () =>
    (await db.query<{ site_id: number }>(`SELECT site_id FROM sites ORDER BY site_id`)).map(
      (s) => s.site_id,
    );
  const active = async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/edge/alarms/active',
      headers: bearer(token),
      payload: { siteIds: await sites() },
    });
    expect(res.statusCode).toBe(200);
    return res.json() as Record<string, any>[];
  };

  it('has active and resolved alarms of the edge on three sites, the resolved ones with notes', async () => {
    const rows = await db.query(
      `SELECT site_id, source, alarm_type, resolved_at IS NOT NULL AS resolved, resolved_by, resolve_note
         FROM site_alarms ORDER BY alarm_id`,
    );
    expect(rows.filter((r) => !r.resolved).length).toBeGreaterThanOrEqual(3);
    const resolved = rows.filter((r) => r.resolved);
    expect(resolved.length).toBeGreaterThanOrEqual(2);
    expect(resolved.every((r) => r.resolved_by === 'demo' && r.resolve_note)).toBe(true);
    expect(new Set(rows.map((r) => r.site_id)).size).toBe(3);
    expect(new Set(rows.map((r) => r.source))).toEqual(new Set(['edge', 'rule', 'communication']));
  });

  it('has limit rules, served with their defaults, and one raised from the demo history', async () => {
    const [first, second] = await sites();
    const res = await app.inject({
      url: `/v1/alarms/rules?siteId=${first}`,
      headers: bearer(token),
    });
    expect(res.statusCode).toBe(200);
    const rules = res.json() as Record<string, any>[];
    expect(rules.length).toBeGreaterThanOrEqual(2);
    const pressure = rules.find((r) => r.AlarmType === 'HighDischargePressure')!;
    expect(pressure).toMatchObject({ Field: 'pressure', Condition: 'above', Enabled: true });
    // Raised by its rule, from the pump's own logs: the value is the logged pressure, above the
    // limit, and the pump is running now.
    const alarm = (await active()).find(
      (a) => a.AlarmType === 'HighDischargePressure' && a.Source === 'rule',
    )!;
    expect(alarm).toMatchObject({
      EquipmentTypeID: 2,
      EquipmentID: String(pressure.SitePumpID),
      Severity: 'critical',
    });
    expect(alarm.Value).toBeGreaterThan(pressure.Limit);
    const [logged] = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM pump_logs WHERE pump_id = $1 AND ts = $2 AND pressure = $3`,
      [pressure.SitePumpID, alarm.FirstSeen, alarm.Value],
    );
    expect(Number(logged.n)).toBe(1);
    const [pump] = await db.query<{ record: Record<string, unknown> }>(
      `SELECT record FROM current_readings WHERE equipment_kind = 'pump' AND equipment_id = $1`,
      [pressure.SitePumpID],
    );
    expect(pump.record).toMatchObject({ running: true });
    expect(pump.record.pressure).toBeGreaterThan(pressure.Limit);
    // The rule evaluated the latest log: its state is the pump's current value.
    const [state] = await db.query<{ last_value: number; active: boolean; raised: boolean }>(
      `SELECT last_value, active, raised FROM alarm_rules WHERE rule_id = $1`,
      [pressure.AlarmRuleID],
    );
    expect(state).toEqual({ last_value: pump.record.pressure, active: true, raised: true });
    // The second site's tripped pump stopped its meter's flow: a low-flow rule alarm after its delay.
    const low = (await active()).find((a) => a.AlarmType === 'LowFlow')!;
    expect(low).toMatchObject({ SiteID: second, Source: 'rule', Value: 0 });
    const trip = (await active()).find((a) => a.AlarmType === 'PumpTrip')!;
    expect(trip).toMatchObject({ SiteID: second, Source: 'edge' });
    const [tripped] = await db.query<{ record: Record<string, unknown> }>(
      `SELECT record FROM current_readings WHERE equipment_kind = 'pump' AND equipment_id = $1`,
      [Number(trip.EquipmentID)],
    );
    expect(tripped.record).toMatchObject({ running: false, frequency: 0 });
  });

  it('has a site whose data stopped longer ago than its CommLossMinutes, in communication loss', async () => {
    const third = (await sites())[2];
    const loss = (await active()).filter((a) => a.AlarmType === 'COMM_LOSS');
    expect(loss).toHaveLength(1);
    expect(loss[0]).toMatchObject({ SiteID: third, Source: 'communication', Severity: 'major' });
    const res = await app.inject({
      url: '/v1/sites?page=1&perPage=50&dataType=additional',
      headers: bearer(token),
    });
    expect(res.statusCode).toBe(200);
    const site = res.json().data.find((s: { SiteID: number }) => s.SiteID === third);
    expect(site.CommLossMinutes).toBe(DEMO_COMM_LOSS_MINUTES);
    const silentFor = Date.now() - Date.parse(site.LastCommunication);
    expect(silentFor).toBeGreaterThan(DEMO_COMM_LOSS_MINUTES * 60_000);
    expect(silentFor).toBeGreaterThanOrEqual(DEMO_STORY.silentMinutesAgo * 60_000);
  });

  it('notifies critical alarms raised from the first start to a webhook that goes nowhere', async () => {
    const [channel] = await db.query<{ channel_id: string; type: string; url: string }>(
      `SELECT channel_id, type, url FROM notification_channels`,
    );
    expect(channel).toMatchObject({ type: 'webhook', url: DEMO_WEBHOOK_URL });
    expect(new URL(channel.url).hostname.endsWith('.invalid')).toBe(true);
    const [policy] = await db.query<{ min_severity: string }>(
      `SELECT min_severity FROM notification_policies`,
    );
    expect(policy.min_severity).toBe('critical');
    // The rule's critical alarm was put in the outbox; the history's alarms (older than the policy)
    // were not. The running service tries it, and keeps it for a retry: nothing was delivered.
    const queued = await db.query<{ alarm_type: string; event: string }>(
      `SELECT a.alarm_type, o.event FROM notification_outbox o JOIN site_alarms a ON a.alarm_id = o.alarm_id::int8`,
    );
    expect(queued).toEqual([{ alarm_type: 'HighDischargePressure', event: 'raised' }]);
    await until(async () => {
      const [row] = await db.query<{ attempts: number }>(
        `SELECT attempts FROM notification_outbox`,
      );
      return row && row.attempts >= 1;
    }, 'a delivery attempt');
    const [journal] = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM alarm_journal WHERE event IN ('notified', 'notification_failed')`,
    );
    expect(Number(journal.n)).toBe(0);
    // What that attempt meets: a name that cannot resolve, retried later (never anyone's server).
    const attempt = await postWebhook(
      DEMO_WEBHOOK_URL,
      'x'.repeat(16),
      'id',
      '{}',
      new BlockList(),
    );
    expect(attempt).toEqual({ result: 'retry', reason: 'cannot resolve alarms.example.invalid' });
  });
});
