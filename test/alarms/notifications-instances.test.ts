import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { bearer, describeWith, openTestDb, testSettings } from '../helper.js';
import { until } from '../wait.js';
import { SENSOR } from './fixtures.js';
import { webhookReceiver } from './notify-fixtures.js';

// Two instances sharing one PostgreSQL (contract 16): both run the step scheduler and the outbox,
// and every notification is delivered once, by one of them.

const SECRET = 'webhook-secret-0123456789';

describeWith(['postgres'], 'notifications on two instances', () => {
  let db: Database;
  let apps: FastifyTypebox[] = [];
  let hooks: Awaited<ReturnType<typeof webhookReceiver>>;
  beforeAll(async () => {
    hooks = await webhookReceiver(SECRET);
    db = await openTestDb('postgres');
    await importDocument(db, {
      ...generateDemo({ sites: 1, transactionsPerSite: 0, imagesPerSite: 0 }),
      notificationChannels: [
        { ChannelID: 'a', Type: 'webhook', Url: hooks.url('/a'), Secret: SECRET },
        { ChannelID: 'b', Type: 'webhook', Url: hooks.url('/b'), Secret: SECRET },
      ],
      notificationPolicies: [
        {
          PolicyID: 'all',
          SiteIDs: '*',
          MinSeverity: 'info',
          Steps: [{ AfterMinutes: 0, ChannelIDs: ['a', 'b'] }],
        },
      ],
    });
    const settings = testSettings({ NOTIFY_ALLOW_PRIVATE: '127.0.0.1/32', NOTIFY_POLL_MS: 10 });
    apps = await Promise.all([0, 1].map(() => buildApp(settings, { db, logger: false })));
    await Promise.all(apps.map((a) => a.ready()));
    await upsertClient(db, { clientId: 'edge', clientSecret: 'secret-123456', siteIds: '*' });
  });
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await db?.close();
    await hooks?.close();
  });

  it('each of 60 alarms reaches each channel exactly once', async () => {
    const res = await apps[0].inject({
      method: 'POST',
      url: '/token',
      payload: { clientId: 'edge', clientSecret: 'secret-123456' },
    });
    const token = res.json().accessToken;
    // Alarms raised through both instances, in parallel.
    await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const r = await apps[i % 2].inject({
          method: 'POST',
          url: '/v1/edge/alarms',
          headers: bearer(token),
          payload: {
            siteId: 1,
            sensorID: SENSOR,
            alarmType: `TWO${i}`,
            severity: 'major',
            message: 'm',
            timestamp: new Date().toISOString(),
          },
        });
        expect(r.statusCode, r.body).toBe(201);
      }),
    );
    await until(
      () => hooks.received.length >= 120,
      () => `${hooks.received.length} of 120`,
    );
    await until(async () => {
      const [r] = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM notification_outbox`,
      );
      return r.n === 0;
    });
    const keys = hooks.received.map((h) => `${h.path} ${h.body.alarm.SiteAlarmLogID}`);
    expect(new Set(keys).size).toBe(120);
    expect(hooks.received).toHaveLength(120);
    expect(new Set(hooks.received.map((h) => h.body.deliveryId)).size).toBe(120);
    expect(hooks.received.every((h) => h.signed)).toBe(true);
    const [j] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM alarm_journal WHERE event = 'notified'`,
    );
    expect(j.n).toBe(120);
  });
});
