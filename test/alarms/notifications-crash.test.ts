import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWith } from '../helper.js';
import { serverStore, startServerProcess, type Running } from '../operations/process.js';
import { until } from '../wait.js';
import { SENSOR } from './fixtures.js';
import { webhookReceiver } from './notify-fixtures.js';

// A notification survives a kill -9 (contract 16): the server process records it with the alarm
// (HTTP 201) and is killed before it sends anything; the next start delivers it, once.

const SECRET = 'webhook-secret-0123456789';

describeWith(['postgres'], 'notifications across a kill -9', () => {
  const store = serverStore('postgres', 'notify_crash');
  let hooks: Awaited<ReturnType<typeof webhookReceiver>>;
  let server: Running | undefined;
  beforeAll(async () => {
    hooks = await webhookReceiver(SECRET);
    await store.prepare();
  });
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await hooks?.close();
    await store.dispose();
  });

  const call = async (base: string, path: string, body: unknown, token?: string) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('an alarm recorded and not yet notified when the process is killed is notified after the restart', async () => {
    const env = { ...store.env, NOTIFY_ALLOW_PRIVATE: '127.0.0.1/32' };
    // The first process looks at its outbox only after a minute: it is killed before that.
    const first = await startServerProcess({ ...env, NOTIFY_POLL_MS: '60000', LOG_LEVEL: 'info' });
    server = first.server;
    const secret = /clientSecret:\s+(\S+)/.exec(server.stdout())?.[1];
    expect(secret, server.stdout()).toBeTruthy();
    const token = (await call(first.base, '/token', { clientId: 'demo', clientSecret: secret }))
      .body.accessToken as string;
    const imported = await call(
      first.base,
      '/v1/admin/import',
      {
        notificationChannels: [
          { ChannelID: 'hook', Type: 'webhook', Url: hooks.url('/crash'), Secret: SECRET },
        ],
        notificationPolicies: [
          {
            PolicyID: 'all',
            SiteIDs: '*',
            MinSeverity: 'info',
            Steps: [{ AfterMinutes: 0, ChannelIDs: ['hook'] }],
          },
        ],
      },
      token,
    );
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    const sent = await call(
      first.base,
      '/v1/edge/alarms',
      {
        siteId: 1,
        sensorID: SENSOR,
        alarmType: 'CRASH',
        severity: 'critical',
        message: 'before the kill',
        timestamp: new Date().toISOString(),
      },
      token,
    );
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const id = sent.body.SiteAlarmLogID as string;
    server.child.kill('SIGKILL');
    await server.exited;
    // Recorded with the alarm, not sent (for this channel: the demo data's own policy, critical
    // alarms to a webhook that resolves nowhere, records one for its channel too).
    const rows = await store.admin((c) =>
      c.query(
        `SELECT 1 FROM ${store.schema}.notification_outbox WHERE alarm_id = $1 AND event = 'raised' AND channel_id = 'hook'`,
        [id],
      ),
    );
    expect(rows.rowCount).toBe(1);
    expect(hooks.received).toHaveLength(0);

    const second = await startServerProcess({ ...env, NOTIFY_POLL_MS: '100' });
    server = second.server;
    await until(() => hooks.received.length >= 1, 'the delivery after the restart', { ms: 60_000 });
    expect(hooks.received[0].body).toMatchObject({
      event: 'raised',
      step: 0,
      alarm: { SiteAlarmLogID: id, Message: 'before the kill' },
    });
    expect(hooks.received[0].signed).toBe(true);
    await until(async () => {
      const j = await store.admin((c) =>
        c.query(
          `SELECT 1 FROM ${store.schema}.alarm_journal WHERE alarm_id = $1 AND event = 'notified'`,
          [id],
        ),
      );
      return j.rowCount === 1;
    });
    expect(hooks.received).toHaveLength(1);
  });
});
