import { afterAll, beforeAll, expect, it } from 'vitest';
import { evaluatePass } from '../../src/alarms/rules/evaluator.js';
import { ImportError } from '../../src/provisioning/import.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { poster, PUMP, SENSOR, SENSOR_2, SITE2_SENSOR } from '../telemetry/fixtures.js';
import { until } from '../wait.js';
import { activeList, alarmsOf, importRules, secondsAgo } from './rules-fixtures.js';

// Limit rules end to end (contract 16): defined by the provisioning document, listed by
// GET /v1/alarms/rules, evaluated on what uploads store, raising and resolving alarms.

describeEachBackend('alarm rules', (backend) => {
  let ctx: TestContext;
  let token: string;
  let post: ReturnType<typeof poster>;
  beforeAll(async () => {
    ctx = await startApp(backend);
    token = await ctx.token();
    post = poster(ctx, token);
  });
  afterAll(async () => ctx?.close());

  const getRules = (siteId: number, t = token) =>
    ctx.app.inject({ method: 'GET', url: `/v1/alarms/rules?siteId=${siteId}`, headers: bearer(t) });

  it('imports rules with their defaults, lists them per site, and refuses a site out of reach', async () => {
    const summary = await importRules(ctx.db, [
      { AlarmRuleID: 1, SiteSensorID: SENSOR, Condition: 'above', Limit: 100, AlarmType: 'HIGH' },
      {
        AlarmRuleID: 2,
        SitePumpID: PUMP,
        Field: 'pressure',
        Condition: 'below',
        Limit: 2,
        Deadband: 0.5,
        DelaySeconds: 30,
        AlarmType: 'LOW_PRESSURE',
        Severity: 'critical',
        Message: 'pump pressure low',
        Enabled: false,
      },
    ]);
    expect(summary.alarmRules).toEqual({ received: 2, changed: 2 });
    const res = await getRules(1);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual([
      {
        AlarmRuleID: 1,
        SiteID: 1,
        SiteSensorID: SENSOR,
        Field: 'value',
        Condition: 'above',
        Limit: 100,
        Deadband: 0,
        DelaySeconds: 0,
        AlarmType: 'HIGH',
        Severity: 'major',
        Message: null,
        Enabled: true,
      },
      {
        AlarmRuleID: 2,
        SiteID: 1,
        SitePumpID: PUMP,
        Field: 'pressure',
        Condition: 'below',
        Limit: 2,
        Deadband: 0.5,
        DelaySeconds: 30,
        AlarmType: 'LOW_PRESSURE',
        Severity: 'critical',
        Message: 'pump pressure low',
        Enabled: false,
      },
    ]);
    expect((await getRules(2)).json()).toEqual([]);
    const other = await ctx.token([2]);
    expect((await getRules(1, other)).statusCode).toBe(403);
    expect((await getRules(999, token)).statusCode).toBe(403);
    // The same import again changes nothing.
    expect(
      (
        await importRules(ctx.db, [
          {
            AlarmRuleID: 1,
            SiteSensorID: SENSOR,
            Condition: 'above',
            Limit: 100,
            AlarmType: 'HIGH',
          },
        ])
      ).alarmRules,
    ).toEqual({ received: 1, changed: 0 });
  });

  it('refuses unknown equipment, a field that is not a number of that kind, and a missing field', async () => {
    const bad = async (rule: Record<string, unknown>) =>
      importRules(ctx.db, [
        { AlarmRuleID: 99, Condition: 'above', Limit: 1, AlarmType: 'X', ...rule },
      ]).then(
        () => undefined,
        (err: ImportError) => `${err.path}: ${err.reason}`,
      );
    expect(await bad({ SiteSensorID: 999_999 })).toBe(
      'alarmRules[0].SiteSensorID: sensor 999999 does not exist',
    );
    expect(await bad({ SitePumpID: PUMP, Field: 'status' })).toMatch(
      /^alarmRules\[0\]\.Field: status is not a numeric field of a pump/,
    );
    expect(await bad({ SitePumpID: PUMP })).toMatch(
      /^alarmRules\[0\]\.Field: is required for a pump/,
    );
    expect(await bad({ SiteSensorID: SENSOR, SitePumpID: PUMP, Field: 'pressure' })).toMatch(
      /must name exactly one/,
    );
    expect(await bad({ SiteSensorID: SENSOR, Limit: 1e16 })).toMatch(/^alarmRules\[0\]\.Limit/);
    expect((await getRules(1)).json().map((r: { AlarmRuleID: number }) => r.AlarmRuleID)).toEqual([
      1, 2,
    ]);
  });

  it('raises on an upload above the limit within 2 s of its 201, keeps it inside the deadband, resolves it below', async () => {
    await importRules(ctx.db, [
      {
        AlarmRuleID: 10,
        SiteSensorID: SENSOR_2,
        Condition: 'above',
        Limit: 50,
        Deadband: 5,
        AlarmType: 'HIGH_10',
      },
    ]);
    const below = await post('logs/sensor/batch', [
      { sensorID: SENSOR_2, value: 49, timestamp: secondsAgo(60) },
    ]);
    expect(below.status).toBe(201);
    const res = await post('logs/sensor', {
      sensorID: SENSOR_2,
      value: 50.5,
      timestamp: secondsAgo(50),
    });
    expect(res.status).toBe(201);
    const answered = Date.now();
    await until(
      async () => (await activeList(ctx, token, [1])).some((a) => a.AlarmType === 'HIGH_10'),
      'the rule alarm in the active list',
    );
    expect(Date.now() - answered).toBeLessThan(2000);
    const [raised] = await alarmsOf(ctx.db, 'HIGH_10');
    expect(raised).toMatchObject({
      source: 'rule',
      value: 50.5,
      equipment_id: SENSOR_2,
      occurrences: 1,
      resolved_at: null,
    });
    // Inside the deadband (45, 50]: still active; a late sample (older than the newest) changes nothing.
    await post('readings/sensor', { sensorID: SENSOR_2, value: 46, timestamp: secondsAgo(40) });
    await post('logs/sensor', { sensorID: SENSOR_2, value: 0, timestamp: secondsAgo(45) });
    await ctx.app.alarmRules.evaluator.settle();
    expect((await alarmsOf(ctx.db, 'HIGH_10')).map((a) => a.resolved_at)).toEqual([null]);
    // At Limit − Deadband: resolved by the rule.
    await post('logs/sensor', { sensorID: SENSOR_2, value: 45, timestamp: secondsAgo(30) });
    await until(
      async () => (await alarmsOf(ctx.db, 'HIGH_10'))[0].resolved_at,
      'the rule to resolve its alarm',
    );
    expect(await alarmsOf(ctx.db, 'HIGH_10')).toMatchObject([
      { resolved_by: 'rule:10', occurrences: 1 },
    ]);
  });

  it('waits for the delay by sample timestamps, then by the clock', async () => {
    await importRules(ctx.db, [
      {
        AlarmRuleID: 19,
        SiteSensorID: SENSOR,
        Condition: 'below',
        Limit: 0,
        DelaySeconds: 3600,
        AlarmType: 'LOW_19',
      },
      {
        AlarmRuleID: 20,
        SiteSensorID: SENSOR,
        Condition: 'below',
        Limit: 0,
        DelaySeconds: 20,
        AlarmType: 'LOW_20',
      },
    ]);
    // Samples 10 s apart: the delay of 20 s ends with the third, which raises with its value and time.
    const t0 = Date.now() - 300_000;
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    await post('logs/sensor/batch', [
      { sensorID: SENSOR, value: -1, timestamp: at(0) },
      { sensorID: SENSOR, value: -2, timestamp: at(10) },
      { sensorID: SENSOR, value: -3, timestamp: at(25) },
    ]);
    await until(async () => (await alarmsOf(ctx.db, 'LOW_20')).length, 'the delayed alarm');
    const [a] = await alarmsOf(ctx.db, 'LOW_20');
    expect(a.value).toBe(-3);
    expect(a.first_seen.toISOString()).toBe(at(25));
    // The rule of an hour has seen the condition for 5 minutes only.
    await ctx.app.alarmRules.evaluator.settle();
    expect(await alarmsOf(ctx.db, 'LOW_19')).toEqual([]);
    await post('logs/sensor', { sensorID: SENSOR, value: 5, timestamp: at(30) });
    await until(async () => (await alarmsOf(ctx.db, 'LOW_20'))[0].resolved_at, 'the clear');
    expect((await alarmsOf(ctx.db, 'LOW_20'))[0].resolved_by).toBe('rule:20');
    // A condition that starts 1.5 s ago with a delay of 2 s: no later sample; the clock completes it.
    await importRules(ctx.db, [
      {
        AlarmRuleID: 21,
        SiteSensorID: SENSOR,
        Condition: 'below',
        Limit: 0,
        DelaySeconds: 2,
        AlarmType: 'LOW_21',
      },
    ]);
    const since = Date.now() - 1500;
    await post('logs/sensor', {
      sensorID: SENSOR,
      value: -7,
      timestamp: new Date(since).toISOString(),
    });
    await ctx.app.alarmRules.evaluator.settle();
    await until(
      async () => (await alarmsOf(ctx.db, 'LOW_21')).length,
      'the alarm raised by the clock',
      { ms: 15_000 },
    );
    const [c] = await alarmsOf(ctx.db, 'LOW_21');
    expect(c).toMatchObject({ value: -7, resolved_at: null });
    expect(c.first_seen.getTime()).toBe(since + 2000);
  });

  it('evaluates readings, raises a resolved-by-hand alarm again, and a rule alarm on an open edge alarm is a duplicate', async () => {
    await importRules(ctx.db, [
      {
        AlarmRuleID: 30,
        SitePumpID: PUMP,
        Field: 'pressure',
        Condition: 'above',
        Limit: 10,
        AlarmType: 'PUMP_HIGH',
      },
    ]);
    // The edge raised the same key first.
    const sent = await post('alarms', {
      siteId: 1,
      sitePumpID: PUMP,
      alarmType: 'PUMP_HIGH',
      message: 'from the edge',
      timestamp: secondsAgo(100),
    });
    expect(sent.status).toBe(201);
    await post('readings/pump/batch', {
      readings: [{ sitePumpID: PUMP, pressure: 5, timestamp: secondsAgo(90) }],
    });
    await post('readings/pump', { sitePumpID: PUMP, pressure: 12, timestamp: secondsAgo(80) });
    await until(
      async () => (await alarmsOf(ctx.db, 'PUMP_HIGH'))[0].occurrences === 2,
      'the duplicate',
    );
    expect(await alarmsOf(ctx.db, 'PUMP_HIGH')).toMatchObject([
      { source: 'edge', value: 12, resolved_at: null },
    ]);
    // The condition clears: the edge's alarm is the edge's to resolve.
    await post('readings/pump', { sitePumpID: PUMP, pressure: 1, timestamp: secondsAgo(70) });
    await ctx.app.alarmRules.evaluator.settle();
    expect((await alarmsOf(ctx.db, 'PUMP_HIGH'))[0].resolved_at).toBeNull();
    await ctx.db.query(
      `UPDATE site_alarms SET resolved_at = now(), resolved_by = 'x' WHERE alarm_type = 'PUMP_HIGH'`,
    );
    // Raised by the rule, resolved by hand while still true: the next true sample raises it again.
    await post('readings/pump', { sitePumpID: PUMP, pressure: 20, timestamp: secondsAgo(60) });
    await until(async () => (await alarmsOf(ctx.db, 'PUMP_HIGH')).length === 2, 'the rule alarm');
    const [, mine] = await alarmsOf(ctx.db, 'PUMP_HIGH');
    await ctx.app.inject({
      method: 'POST',
      url: '/v1/edge/alarms/resolve',
      headers: bearer(token),
      payload: { siteId: 1, alarms: [{ SiteAlarmLogID: mine.id }] },
    });
    await post('readings/pump', { sitePumpID: PUMP, pressure: 21, timestamp: secondsAgo(50) });
    await until(
      async () => (await alarmsOf(ctx.db, 'PUMP_HIGH')).length === 3,
      'the alarm raised again',
    );
    expect((await alarmsOf(ctx.db, 'PUMP_HIGH'))[2]).toMatchObject({
      source: 'rule',
      value: 21,
      resolved_at: null,
    });
  });

  it('a disabled or deleted rule raises nothing, and its open alarm is resolved', async () => {
    const rule = {
      AlarmRuleID: 40,
      SiteSensorID: SITE2_SENSOR,
      Condition: 'above',
      Limit: 1,
      AlarmType: 'S2_HIGH',
    };
    await importRules(ctx.db, [rule]);
    await post('logs/sensor', { sensorID: SITE2_SENSOR, value: 2, timestamp: secondsAgo(20) });
    await until(async () => (await alarmsOf(ctx.db, 'S2_HIGH')).length, 'the alarm');
    await importRules(ctx.db, [{ ...rule, Enabled: false }]);
    expect(await alarmsOf(ctx.db, 'S2_HIGH')).toMatchObject([{ resolved_by: 'rule:40' }]);
    await post('logs/sensor', { sensorID: SITE2_SENSOR, value: 3, timestamp: secondsAgo(10) });
    await ctx.app.alarmRules.evaluator.settle();
    expect(await alarmsOf(ctx.db, 'S2_HIGH')).toHaveLength(1);
    await importRules(ctx.db, [{ ...rule, Enabled: true }]);
    await post('logs/sensor', { sensorID: SITE2_SENSOR, value: 4, timestamp: secondsAgo(5) });
    await until(
      async () => (await alarmsOf(ctx.db, 'S2_HIGH')).length === 2,
      'the alarm of the enabled rule',
    );
    expect((await importRules(ctx.db, [{ ...rule, Deleted: true }])).alarmRules.changed).toBe(1);
    expect((await alarmsOf(ctx.db, 'S2_HIGH'))[1].resolved_by).toBe('rule:40');
    expect((await getRules(2)).json()).toEqual([]);
  });

  it('the admin import takes rules, within the sites of a limited admin only', async () => {
    const admin = await ctx.token([2], { admin: true });
    const importAs = (alarmRules: unknown[]) =>
      ctx.app.inject({
        method: 'POST',
        url: '/v1/admin/import',
        headers: bearer(admin),
        payload: { alarmRules },
      });
    const rule = { AlarmRuleID: 50, Condition: 'above', Limit: 1, AlarmType: 'ADMIN' };
    const refused = await importAs([{ ...rule, SiteSensorID: SENSOR }]);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().details).toEqual([
      { path: '/alarmRules/0/SiteSensorID', message: 'outside the sites of this administrator' },
    ]);
    const ok = await importAs([{ ...rule, SiteSensorID: SITE2_SENSOR }]);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().alarmRules).toEqual({ received: 1, changed: 1 });
    const bad = await importAs([{ ...rule, SiteSensorID: SITE2_SENSOR, Field: 'pressure' }]);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/alarmRules\[0\]\.Field/);
    // A rule of another site cannot be taken over by naming equipment of this one.
    await importRules(ctx.db, [{ ...rule, AlarmRuleID: 51, SiteSensorID: SENSOR }]);
    expect(
      (await importAs([{ ...rule, AlarmRuleID: 51, SiteSensorID: SITE2_SENSOR }])).statusCode,
    ).toBe(403);
  });

  it('a pass that finds the position taken by another pass does nothing (one evaluator at a time)', async () => {
    if (backend !== 'postgres') return;
    await ctx.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM alarm_rule_cursor FOR UPDATE');
      expect(await evaluatePass(ctx.db, { log: ctx.app.log })).toEqual({
        more: false,
        changed: false,
        busy: true,
      });
    });
  });
});
