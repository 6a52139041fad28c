import { afterAll, beforeAll, expect, it } from 'vitest';
import { createMetrics, type ServiceMetrics } from '../../src/metrics.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { until } from '../wait.js';
import { minutesAgo, SENSOR, SITE2_SENSOR } from './fixtures.js';
import { aroundNow, managementClient, type ManagementClient } from './management-fixtures.js';
import { smtpReceiver, webhookReceiver, type Hook, type Mail } from './notify-fixtures.js';

// Notifications (contract 16) end to end, with a real HTTP receiver on localhost (allowed by
// NOTIFY_ALLOW_PRIVATE) that checks the signature, and a real SMTP receiver: channels and
// policies imported through the admin API, steps, retries, escalation and repeats until an
// acknowledgement, the resolved notification, a private address refused, the metrics.

const DEMO = { sites: 2, transactionsPerSite: 0, imagesPerSite: 0 };
const SECRET = 'webhook-secret-0123456789';

describeEachBackend('notifications', (backend) => {
  let ctx: TestContext;
  let op: ManagementClient;
  let hooks: Awaited<ReturnType<typeof webhookReceiver>>;
  let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
  let metrics: ServiceMetrics;
  let logs = '';
  beforeAll(async () => {
    hooks = await webhookReceiver(SECRET);
    smtp = await smtpReceiver();
    metrics = createMetrics();
    ctx = await startApp(backend, {
      demo: DEMO,
      metrics,
      logger: {
        level: 'info',
        stream: { write: (line: string) => void (logs += line) },
      },
      settings: {
        SMTP_URL: smtp.url,
        SMTP_FROM: 'alarms@example.com',
        PUBLIC_URL: 'https://monitor.example.com',
        NOTIFY_ALLOW_PRIVATE: '127.0.0.0/8',
        NOTIFY_POLL_MS: 50,
      },
    });
    const admin = await ctx.token('*', { clientId: 'admin-1', admin: true });
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/admin/import',
      headers: bearer(admin),
      payload: {
        notificationChannels: [
          { ChannelID: 'hook', Type: 'webhook', Url: hooks.url('/first'), Secret: SECRET },
          { ChannelID: 'esc', Type: 'webhook', Url: hooks.url('/esc'), Secret: SECRET },
          { ChannelID: 'private', Type: 'webhook', Url: 'http://10.255.255.1/x', Secret: SECRET },
          { ChannelID: 'mail', Type: 'email', To: ['oncall@example.com'] },
        ],
        notificationPolicies: [
          {
            PolicyID: 'site1',
            SiteIDs: [1],
            MinSeverity: 'major',
            Steps: [{ AfterMinutes: 0, ChannelIDs: ['hook', 'mail', 'private'] }],
          },
          {
            PolicyID: 'site2',
            SiteIDs: [2],
            MinSeverity: 'minor',
            Steps: [
              { AfterMinutes: 0, ChannelIDs: ['esc'] },
              { AfterMinutes: 1, ChannelIDs: ['esc'] },
            ],
            RepeatMinutes: 1,
          },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      notificationChannels: { received: 4 },
      notificationPolicies: { received: 2 },
    });
    op = managementClient(ctx, await ctx.token('*', { clientId: 'op-1' }));
  });
  afterAll(async () => {
    await ctx?.close();
    await hooks?.close();
    await smtp?.close();
  });

  let n = 0;
  const raise = async (siteId: number, severity = 'critical') => {
    const res = await op.send({
      siteId,
      sensorID: siteId === 1 ? SENSOR : SITE2_SENSOR,
      alarmType: `N${++n}`,
      severity,
      message: `pressure high ${n}`,
      timestamp: minutesAgo(1),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.SiteAlarmLogID as string;
  };
  const journalOf = async (id: string, siteId: number) =>
    (await op.journal({ siteIds: [siteId], ...aroundNow(), SiteAlarmLogID: id })).body
      .data as any[];
  const hooksOf = (id: string, path: string) =>
    hooks.received.filter((h) => h.body.alarm.SiteAlarmLogID === id && h.path === path);
  const counter = async (channel: string, result: string) =>
    (await metrics.registry.getSingleMetric('site_monitor_notifications_total')!.get()).values.find(
      (v) => v.labels.channel === channel && v.labels.result === result,
    )?.value ?? 0;

  it('a raised alarm reaches the webhook, signed, and the mailbox; each delivery is journaled', async () => {
    const id = await raise(1);
    const [hook] = (await until(
      () => hooksOf(id, '/first').length >= 1 && hooksOf(id, '/first'),
    )) as Hook[];
    expect(hook.signed).toBe(true);
    expect(hook.headers['x-site-monitor-delivery']).toBe(hook.body.deliveryId);
    expect(
      Math.abs(Number(hook.headers['x-site-monitor-timestamp']) - Date.now() / 1000),
    ).toBeLessThan(60);
    expect(hook.body).toMatchObject({
      event: 'raised',
      step: 0,
      alarm: { SiteAlarmLogID: id, Severity: 'critical', Source: 'edge', AcknowledgedAt: null },
      site: { SiteID: 1 },
    });
    expect(typeof hook.body.site.Name).toBe('string');
    const mail = (await until<Mail | undefined>(() =>
      smtp.mails.find((m) => m.raw.includes(`Alarm ${id}:`)),
    ))!;
    expect(mail.to).toEqual(['oncall@example.com']);
    expect(mail.from).toBe('alarms@example.com');
    expect(mail.raw).toContain(`Subject: [CRITICAL] ${hook.body.site.Name}: pressure high ${n}`);
    expect(mail.raw).toContain('https://monitor.example.com/console/sites/1');
    const journal = (await until(async () => {
      const j = await journalOf(id, 1);
      return j.filter((e) => e.Event !== 'raised').length === 3 ? j : null;
    }))!;
    const byChannel = Object.fromEntries(
      journal.filter((e) => e.Channel).map((e) => [e.Channel, e]),
    );
    expect(byChannel.hook).toMatchObject({ Event: 'notified', Step: 0, By: null });
    expect(byChannel.mail).toMatchObject({ Event: 'notified', Step: 0 });
    // The private address is refused, not called, however the policy names it.
    expect(byChannel.private).toMatchObject({ Event: 'notification_failed', Step: 0 });
    expect(byChannel.private.Note).toMatch(/private/);
    expect(await counter('webhook', 'delivered')).toBeGreaterThanOrEqual(1);
    expect(await counter('email', 'delivered')).toBeGreaterThanOrEqual(1);
    expect(await counter('webhook', 'failed')).toBeGreaterThanOrEqual(1);
    // No secret anywhere it could leak: the logs, the journal, the metrics.
    expect(logs).not.toContain(SECRET);
    expect(JSON.stringify(journal)).not.toContain(SECRET);
    expect(await metrics.registry.metrics()).not.toContain(SECRET);
  });

  it("below the policy's MinSeverity nothing is sent", async () => {
    const low = await raise(1, 'minor');
    const high = await raise(1);
    await until(() => hooksOf(high, '/first').length);
    await until(
      async () =>
        !(await ctx.db.query(`SELECT 1 FROM notification_schedule WHERE alarm_id = $1`, [low]))
          .length,
    );
    expect(hooksOf(low, '/first')).toHaveLength(0);
  });

  it('a receiver that fails (503) gets the same delivery again, and it is delivered once it answers', async () => {
    hooks.failFirst.set('/first', [503, 503]);
    const retriedBefore = await counter('webhook', 'retried');
    const id = await raise(1);
    const got = (await until(() =>
      hooksOf(id, '/first').length >= 3 ? hooksOf(id, '/first') : null,
    ))!;
    expect(got.map((h) => h.status)).toEqual([503, 503, 200]);
    expect(new Set(got.map((h) => h.body.deliveryId)).size).toBe(1);
    expect(got.every((h) => h.signed)).toBe(true);
    expect(await counter('webhook', 'retried')).toBe(retriedBefore + 2);
    await until(async () =>
      (await journalOf(id, 1)).some((e) => e.Event === 'notified' && e.Channel === 'hook'),
    );
    expect((await journalOf(id, 1)).filter((e) => e.Channel === 'hook')).toHaveLength(1);
  });

  it('a mail server that answers 451 gets the message again; 550 fails it', async () => {
    const retriedBefore = await counter('email', 'retried');
    smtp.rejectNext.push(451);
    const id = await raise(1);
    await until(() => smtp.mails.some((m) => m.raw.includes(`Alarm ${id}:`)));
    expect(smtp.rejected()).toBeGreaterThanOrEqual(1);
    expect(await counter('email', 'retried')).toBe(retriedBefore + 1);
    smtp.rejectNext.push(550);
    const other = await raise(1);
    const entry = await until(async () =>
      (await journalOf(other, 1)).find(
        (e) => e.Channel === 'mail' && e.Event === 'notification_failed',
      ),
    );
    expect(entry.Note).toBe('SMTP server answered 550');
  });

  it('a status that is not retried (404) fails the delivery at once', async () => {
    hooks.failFirst.set('/first', [404]);
    const id = await raise(1);
    const entry = await until(async () =>
      (await journalOf(id, 1)).find(
        (e) => e.Channel === 'hook' && e.Event === 'notification_failed',
      ),
    );
    expect(entry.Note).toBe('HTTP 404');
    expect(hooksOf(id, '/first')).toHaveLength(1);
  });

  it('a delivery still failing 24 h after it was recorded fails for good', async () => {
    hooks.failFirst.set('/first', Array(1000).fill(503));
    const failedBefore = await counter('webhook', 'failed');
    const id = await raise(1);
    await until(() => hooksOf(id, '/first').length >= 1);
    // As if recorded a day ago: the next failure ends it.
    await ctx.db.query(
      `UPDATE notification_outbox SET created_at = now() - interval '24 hours', next_attempt_at = now()
        WHERE alarm_id = $1 AND channel_id = 'hook'`,
      [id],
    );
    const entry = await until(async () =>
      (await journalOf(id, 1)).find(
        (e) => e.Channel === 'hook' && e.Event === 'notification_failed',
      ),
    );
    hooks.failFirst.set('/first', []);
    expect(entry.Note).toBe('HTTP 503');
    expect(await counter('webhook', 'failed')).toBeGreaterThan(failedBefore);
    const left = await ctx.db.query(
      `SELECT 1 FROM notification_outbox WHERE alarm_id = $1 AND channel_id = 'hook'`,
      [id],
    );
    expect(left).toHaveLength(0);
  });

  /** Moves an alarm's raise (and its due step) `seconds` into the past: the clock of the steps. */
  const age = async (id: string, seconds: number) => {
    await ctx.db.query(
      `UPDATE site_alarms SET raised_at = raised_at - make_interval(secs => $2) WHERE alarm_id = $1`,
      [id, seconds],
    );
    await ctx.db.query(
      `UPDATE notification_schedule SET due_at = due_at - make_interval(secs => $2) WHERE alarm_id = $1`,
      [id, seconds],
    );
  };

  it('escalates, repeats until acknowledged, then stops; the resolve is notified to the channel', async () => {
    const id = await raise(2, 'major');
    await until(() => hooksOf(id, '/esc').length === 1);
    expect(hooksOf(id, '/esc')[0].body).toMatchObject({ event: 'raised', step: 0 });
    await age(id, 61);
    await until(() => hooksOf(id, '/esc').length === 2);
    expect(hooksOf(id, '/esc')[1].body).toMatchObject({ event: 'escalated', step: 1 });
    await age(id, 61);
    await until(() => hooksOf(id, '/esc').length === 3);
    expect(hooksOf(id, '/esc')[2].body).toMatchObject({ event: 'repeated', step: 1 });
    await age(id, 61);
    await until(() => hooksOf(id, '/esc').length === 4);
    expect(hooksOf(id, '/esc')[3].body).toMatchObject({ event: 'repeated', step: 1 });
    // Every delivery is a new one.
    expect(new Set(hooksOf(id, '/esc').map((h) => h.body.deliveryId)).size).toBe(4);

    expect((await op.acknowledge(2, [id])).status).toBe(200);
    await age(id, 61);
    // The step that fell due finds it acknowledged: the schedule ends, nothing more is sent.
    await until(
      async () =>
        !(await ctx.db.query(`SELECT 1 FROM notification_schedule WHERE alarm_id = $1`, [id]))
          .length,
    );
    expect(hooksOf(id, '/esc')).toHaveLength(4);

    expect((await op.resolve(2, [id])).status).toBe(200);
    await until(() => hooksOf(id, '/esc').length === 5);
    expect(hooksOf(id, '/esc')[4].body).toMatchObject({
      event: 'resolved',
      alarm: { SiteAlarmLogID: id },
    });
    await until(
      async () => (await journalOf(id, 2)).filter((e) => e.Channel === 'esc').length === 5,
    );
    const steps = (await journalOf(id, 2))
      .filter((e) => e.Channel === 'esc')
      .map((e) => [e.Event, e.Step]);
    expect(steps).toEqual([
      ['notified', 0],
      ['notified', 1],
      ['notified', 1],
      ['notified', 1],
      ['notified', null],
    ]);
  });

  it('a shelved alarm sends nothing while shelved; after the shelf only the latest step due is sent', async () => {
    const id = await raise(2, 'major');
    await until(() => hooksOf(id, '/esc').length === 1);
    expect((await op.shelve(2, [id], 5)).status).toBe(200);
    await age(id, 200); // step 1 and two repeats fell due while shelved
    await until(async () => {
      const [r] = await ctx.db.query<{ due: boolean }>(
        `SELECT due_at > now() AS due FROM notification_schedule WHERE alarm_id = $1`,
        [id],
      );
      return r?.due;
    });
    expect(hooksOf(id, '/esc')).toHaveLength(1);
    expect((await op.unshelve(2, [id])).status).toBe(200);
    await ctx.db.query(`UPDATE notification_schedule SET due_at = now() WHERE alarm_id = $1`, [id]);
    await until(() => hooksOf(id, '/esc').length === 2);
    expect(hooksOf(id, '/esc')[1].body).toMatchObject({ event: 'escalated', step: 1 });
  });

  it('the pending gauge counts what is still to deliver', async () => {
    const gauge = async () =>
      (await metrics.registry.getSingleMetric('site_monitor_notifications_pending')?.get())
        ?.values[0]?.value;
    // A receiver that keeps failing keeps its notification pending.
    hooks.failFirst.set('/first', Array(1000).fill(503));
    const id = await raise(1);
    await until(() => hooksOf(id, '/first').length >= 1);
    expect(await gauge()).toBeGreaterThanOrEqual(1);
    hooks.failFirst.set('/first', []);
    await ctx.db.query(
      `UPDATE notification_outbox SET next_attempt_at = now() WHERE alarm_id = $1`,
      [id],
    );
    await until(async () => (await gauge()) === 0);
  });
});
