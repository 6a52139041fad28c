import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { alarmClient, minutesAgo, type AlarmClient } from './fixtures.js';

// The active list narrowed to some severities (the console's severity filter): applied before the
// limit, so the newest alarms of a severity are found however many others are newer.

describeEachBackend('active alarms by severity', (backend) => {
  let ctx: TestContext;
  let c: AlarmClient;
  beforeAll(async () => {
    ctx = await startApp(backend);
    c = alarmClient(ctx, await ctx.token('*'));
    // Site 1: one critical alarm, older than five warnings.
    const send = (alarmType: string, severity: string, minutes: number) =>
      c.send({
        siteId: 1,
        alarmType,
        severity,
        message: `${alarmType} test`,
        timestamp: minutesAgo(minutes),
      });
    expect((await send('Critical1', 'critical', 30)).status).toBe(201);
    for (let i = 0; i < 5; i++)
      expect((await send(`Warn${i}`, 'warning', 20 - i)).status).toBe(201);
    expect(
      (
        await c.send({
          siteId: 2,
          alarmType: 'Minor2',
          severity: 'minor',
          message: 'site 2',
          timestamp: minutesAgo(5),
        })
      ).status,
    ).toBe(201);
  });
  afterAll(async () => ctx?.close());

  const active = (body: object) => c.post('alarms/active', body);

  it('returns only the asked severities, and applies them before the limit', async () => {
    const all = await active({ siteIds: [1, 2] });
    expect(all.status).toBe(200);
    const severities = new Set(all.body.map((a: { Severity: string }) => a.Severity));
    expect(severities.size).toBeGreaterThan(2);

    const critical = await active({ siteIds: [1], severities: ['critical'], limit: 1 });
    expect(critical.status).toBe(200);
    expect(critical.body.map((a: { AlarmType: string }) => a.AlarmType)).toContain('Critical1');
    expect(critical.body.every((a: { Severity: string }) => a.Severity === 'critical')).toBe(true);
    // Without the filter, limit 1 gives the newest alarm, a warning.
    expect((await active({ siteIds: [1], limit: 1 })).body[0].Severity).not.toBe('critical');

    const two = await active({ siteIds: [1, 2], severities: ['warning', 'minor'] });
    const types = two.body.map((a: { AlarmType: string }) => a.AlarmType);
    expect(types).toEqual(expect.arrayContaining(['Warn0', 'Warn4', 'Minor2']));
    expect(types).not.toContain('Critical1');
    expect(
      two.body.every((a: { Severity: string }) => ['warning', 'minor'].includes(a.Severity)),
    ).toBe(true);
  });

  it('400 for an unknown severity, an empty list or one listed twice', async () => {
    for (const severities of [['urgent'], [], ['minor', 'minor'], 'minor'])
      expect((await active({ siteIds: [1], severities })).status, JSON.stringify(severities)).toBe(
        400,
      );
  });
});
