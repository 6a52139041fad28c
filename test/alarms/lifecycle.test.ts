import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { alarmClient, METER, openCount, PUMP, SENSOR, TANK, type AlarmClient } from './fixtures.js';

// Times relative to one anchor, so that expectations computed later still match across a minute boundary.
const anchor = Math.floor(Date.now() / 60_000) * 60_000;
const minutesAgo = (m: number) => new Date(anchor - m * 60_000).toISOString();

describeEachBackend('alarm lifecycle', (backend) => {
  let ctx: TestContext;
  let api: AlarmClient;
  beforeAll(async () => {
    ctx = await startApp(backend);
    api = alarmClient(ctx, await ctx.token('*', { clientId: 'operator-1' }));
  });
  afterAll(async () => ctx?.close());

  const activeOf = async (siteId: number, alarmType: string) =>
    ((await api.active([siteId])).body as { AlarmType: string }[]).filter(
      (a) => a.AlarmType === alarmType,
    );

  it('creates an alarm (201) and lists it with the contract fields, EquipmentID as a string', async () => {
    const ts = minutesAgo(30);
    const res = await api.send({
      siteId: 1,
      sitePumpID: PUMP,
      alarmType: 'HighPressure',
      severity: 'critical',
      message: 'above 1450 psi',
      value: 1482.5,
      timestamp: ts,
    });
    expect(res).toEqual({
      status: 201,
      body: { SiteAlarmLogID: expect.stringMatching(/^\d+$/), status: 'created' },
    });
    expect(await activeOf(1, 'HighPressure')).toEqual([
      {
        SiteAlarmLogID: res.body.SiteAlarmLogID,
        SiteID: 1,
        EquipmentTypeID: 2,
        EquipmentID: String(PUMP),
        AlarmType: 'HighPressure',
        Severity: 'critical',
        Message: 'above 1450 psi',
        Value: 1482.5,
        FirstSeen: ts,
        LastSeen: ts,
        Occurrences: 1,
        Source: 'edge',
        RaisedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        AcknowledgedAt: null,
        AcknowledgedBy: null,
        ShelvedUntil: null,
      },
    ]);
  });

  it('deduplicates while unresolved: same id, duplicate, Occurrences and LastSeen bumped, latest Severity/Message/Value', async () => {
    const base = {
      siteId: 1,
      siteTankGroupID: TANK,
      alarmType: 'TankOverflow',
      timestamp: minutesAgo(20),
    };
    const first = await api.send({
      ...base,
      severity: 'minor',
      message: 'level 16.6 ft',
      value: 16.6,
    });
    const second = await api.send({
      ...base,
      timestamp: minutesAgo(10),
      severity: 'critical',
      message: 'level 17.9 ft',
      value: 17.9,
    });
    const third = await api.send({
      ...base,
      timestamp: minutesAgo(5),
      message: 'overflow switch',
      value: null,
    });
    expect(first.body.status).toBe('created');
    expect([second, third].map((r) => r.status)).toEqual([201, 201]);
    expect([second.body, third.body]).toEqual([
      { SiteAlarmLogID: first.body.SiteAlarmLogID, status: 'duplicate' },
      { SiteAlarmLogID: first.body.SiteAlarmLogID, status: 'duplicate' },
    ]);
    expect(await activeOf(1, 'TankOverflow')).toEqual([
      expect.objectContaining({
        SiteAlarmLogID: first.body.SiteAlarmLogID,
        EquipmentTypeID: 3,
        EquipmentID: String(TANK),
        Occurrences: 3,
        FirstSeen: minutesAgo(20),
        LastSeen: minutesAgo(5),
        Severity: 'major',
        Message: 'overflow switch',
        Value: null,
      }),
    ]);
    expect(await openCount(ctx.db, 1, 'TankOverflow')).toBe(1);
  });

  it('an out-of-order duplicate is counted, widens FirstSeen, but moves neither LastSeen nor the latest values back', async () => {
    const base = { siteId: 1, flowMeterID: METER, alarmType: 'LowFlow' };
    const first = await api.send({
      ...base,
      message: 'newest',
      value: 2,
      severity: 'minor',
      timestamp: minutesAgo(10),
    });
    const late = await api.send({
      ...base,
      message: 'older',
      value: 1,
      severity: 'critical',
      timestamp: minutesAgo(40),
    });
    expect(late.body).toEqual({ SiteAlarmLogID: first.body.SiteAlarmLogID, status: 'duplicate' });
    const same = await api.send({
      ...base,
      message: 'same time, later send',
      value: 3,
      timestamp: minutesAgo(10),
    });
    expect(same.body.status).toBe('duplicate');
    expect(await activeOf(1, 'LowFlow')).toEqual([
      expect.objectContaining({
        Occurrences: 3,
        FirstSeen: minutesAgo(40),
        LastSeen: minutesAgo(10),
        Message: 'same time, later send',
        Value: 3,
        Severity: 'major',
      }),
    ]);
  });

  it('keys by site, equipment and alarmType: each differing part makes another alarm; site alarms dedupe too', async () => {
    const ts = minutesAgo(3);
    const sends = [
      { siteId: 1, sensorID: SENSOR, alarmType: 'KeyTest', message: 'm', timestamp: ts },
      { siteId: 1, sensorID: SENSOR + 1, alarmType: 'KeyTest', message: 'm', timestamp: ts },
      { siteId: 1, sensorID: SENSOR, alarmType: 'keytest', message: 'm', timestamp: ts },
      { siteId: 1, alarmType: 'KeyTest', message: 'site alarm', timestamp: ts },
      {
        siteId: 1,
        alarmType: 'KeyTest',
        sensorID: null,
        message: 'site alarm again (null id)',
        timestamp: ts,
      },
      { siteId: 2, alarmType: 'KeyTest', message: 'other site', timestamp: ts },
    ];
    const results = [];
    for (const s of sends) results.push((await api.send(s)).body);
    expect(results.map((r) => r.status)).toEqual([
      'created',
      'created',
      'created',
      'created',
      'duplicate',
      'created',
    ]);
    expect(new Set(results.map((r) => r.SiteAlarmLogID)).size).toBe(5);
    expect(results[4].SiteAlarmLogID).toBe(results[3].SiteAlarmLogID);
    const site = (await activeOf(1, 'KeyTest')).find((a: any) => a.EquipmentTypeID === null) as any;
    expect(site).toMatchObject({
      EquipmentID: null,
      Occurrences: 2,
      Message: 'site alarm again (null id)',
      Severity: 'major',
    });
    const sensor = (await activeOf(1, 'KeyTest')).find(
      (a: any) => a.EquipmentID === String(SENSOR),
    ) as any;
    expect(sensor.EquipmentTypeID).toBe(5);
  });

  it('resolves (200), records when, by whom and the note; the next send creates a new alarm; a second resolve is already_resolved', async () => {
    const alarm = {
      siteId: 1,
      sitePumpID: PUMP,
      alarmType: 'PumpTrip',
      message: 'tripped',
      timestamp: minutesAgo(8),
    };
    const created = (await api.send(alarm)).body.SiteAlarmLogID;
    const before = Date.now();
    const res = await api.resolve(1, [
      { SiteAlarmLogID: created, note: 'reset the overload relay' },
    ]);
    expect(res).toEqual({ status: 200, body: [{ SiteAlarmLogID: created, status: 'resolved' }] });
    const [row] = await ctx.db.query<{
      resolved_at: Date;
      resolved_by: string;
      resolve_note: string;
    }>(`SELECT resolved_at, resolved_by, resolve_note FROM site_alarms WHERE alarm_id = $1`, [
      created,
    ]);
    expect(row.resolved_by).toBe('operator-1');
    expect(row.resolve_note).toBe('reset the overload relay');
    expect(new Date(row.resolved_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(await activeOf(1, 'PumpTrip')).toEqual([]);

    const again = await api.send(alarm);
    expect(again.body.status).toBe('created');
    expect(again.body.SiteAlarmLogID).not.toBe(created);
    expect(await activeOf(1, 'PumpTrip')).toEqual([
      expect.objectContaining({ SiteAlarmLogID: again.body.SiteAlarmLogID, Occurrences: 1 }),
    ]);

    // Integer ids are accepted too; the old one is already resolved, the new one resolves now.
    const twice = await api.resolve(1, [
      { SiteAlarmLogID: Number(created) },
      { SiteAlarmLogID: again.body.SiteAlarmLogID },
    ]);
    expect(twice).toEqual({
      status: 200,
      body: [
        { SiteAlarmLogID: created, status: 'already_resolved' },
        { SiteAlarmLogID: again.body.SiteAlarmLogID, status: 'resolved' },
      ],
    });
    const [kept] = await ctx.db.query(`SELECT resolve_note FROM site_alarms WHERE alarm_id = $1`, [
      created,
    ]);
    expect(kept.resolve_note).toBe('reset the overload relay');
  });

  it('an id listed twice in one resolve is resolved by its first entry (with its note) and already_resolved after', async () => {
    const id = (
      await api.send({ siteId: 1, alarmType: 'Twice', message: 'm', timestamp: minutesAgo(1) })
    ).body.SiteAlarmLogID;
    const res = await api.resolve(1, [
      { SiteAlarmLogID: `00${id}`, note: 'first' },
      { SiteAlarmLogID: id, note: 'second' },
    ]);
    expect(res.body).toEqual([
      { SiteAlarmLogID: id, status: 'resolved' },
      { SiteAlarmLogID: id, status: 'already_resolved' },
    ]);
    const [row] = await ctx.db.query(`SELECT resolve_note FROM site_alarms WHERE alarm_id = $1`, [
      id,
    ]);
    expect(row.resolve_note).toBe('first');
  });

  it('a batch answers 201 in request order, counting alarms of one key in it as successive sends', async () => {
    const ts = (m: number) => minutesAgo(m);
    const res = await api.batch(2, [
      { alarmType: 'BatchA', message: 'a1', timestamp: ts(9) },
      { alarmType: 'BatchB', severity: 'info', message: 'b1', timestamp: ts(8) },
      { alarmType: 'BatchA', message: 'a2', value: 7, timestamp: ts(7) },
      { alarmType: 'BatchA', message: 'a0', timestamp: ts(30) },
    ]);
    expect(res.status).toBe(201);
    expect(res.body.map((r: any) => r.status)).toEqual([
      'created',
      'created',
      'duplicate',
      'duplicate',
    ]);
    const [a, b] = [res.body[0].SiteAlarmLogID, res.body[1].SiteAlarmLogID];
    expect(res.body.map((r: any) => r.SiteAlarmLogID)).toEqual([a, b, a, a]);
    expect(await activeOf(2, 'BatchA')).toEqual([
      expect.objectContaining({
        SiteAlarmLogID: a,
        SiteID: 2,
        Occurrences: 3,
        Message: 'a2',
        Value: 7,
        FirstSeen: ts(30),
        LastSeen: ts(7),
      }),
    ]);
    // The next batch finds the open alarms: duplicates.
    const next = await api.batch(2, [{ alarmType: 'BatchB', message: 'b2', timestamp: ts(1) }]);
    expect(next.body).toEqual([{ SiteAlarmLogID: b, status: 'duplicate' }]);
    expect((await api.batch(2, [])).body).toEqual([]);
  });

  it('keeps text exactly as sent, whatever characters it holds', async () => {
    const texts = [
      'NULL',
      '',
      'a,b',
      '{"x": [1, 2]}',
      'back\\slash "quoted" \'single\'',
      'ünïcødé ⚠️ 警报',
      ' padded ',
    ];
    const res = await api.batch(
      4,
      texts.map((t, i) => ({ alarmType: `Text ${t} ${i}`, message: t, timestamp: minutesAgo(0) })),
    );
    expect(res.status).toBe(201);
    const list = (await api.active([4])).body as any[];
    for (const [i, t] of texts.entries())
      expect(list.find((a) => a.AlarmType === `Text ${t} ${i}`)?.Message).toBe(t);
    await api.resolve(
      4,
      res.body.map((r: any, i: number) => ({ SiteAlarmLogID: r.SiteAlarmLogID, note: texts[i] })),
    );
    const notes = await ctx.db.query(
      `SELECT alarm_type, resolve_note FROM site_alarms WHERE site_id = 4 AND alarm_type LIKE 'Text %'`,
    );
    expect(Object.fromEntries(notes.map((n) => [n.alarm_type, n.resolve_note]))).toEqual(
      Object.fromEntries(texts.map((t, i) => [`Text ${t} ${i}`, t])),
    );
  });

  it('lists only unresolved alarms of the requested sites, newest first (LastSeen, then id), bounded by limit', async () => {
    const ts = minutesAgo(0);
    const ids: string[] = [];
    for (const t of ['OrderA', 'OrderB', 'OrderC'])
      ids.push(
        (await api.send({ siteId: 3, alarmType: t, message: t, timestamp: ts })).body
          .SiteAlarmLogID,
      );
    const older = (
      await api.send({
        siteId: 3,
        alarmType: 'OrderOld',
        message: 'old',
        timestamp: minutesAgo(60),
      })
    ).body.SiteAlarmLogID;
    const gone = (
      await api.send({ siteId: 3, alarmType: 'OrderGone', message: 'x', timestamp: minutesAgo(0) })
    ).body.SiteAlarmLogID;
    await api.resolve(3, [{ SiteAlarmLogID: gone }]);
    const list = (await api.active([3, 3])).body as any[];
    expect(list.map((a) => a.SiteAlarmLogID)).toEqual([...ids].reverse().concat(older));
    expect(list.every((a) => a.SiteID === 3)).toBe(true);
    expect((await api.active([3], 2)).body.map((a: any) => a.SiteAlarmLogID)).toEqual([
      ids[2],
      ids[1],
    ]);
    const both = (await api.active([1, 3])).body as any[];
    expect(new Set(both.map((a) => a.SiteID))).toEqual(new Set([1, 3]));
    const times = both.map((a) => a.LastSeen);
    expect([...times].sort().reverse()).toEqual(times);
    expect((await api.active([4])).body).toEqual([]);
  });

  it('ActiveAlarmCount of GET /v1/sites?dataType=additional counts the unresolved alarms of each site', async () => {
    const token = await ctx.token('*');
    const sites = async () => {
      const res = await ctx.app.inject({
        method: 'GET',
        url: '/v1/sites?page=1&perPage=10&dataType=additional',
        headers: bearer(token),
      });
      return Object.fromEntries(res.json().data.map((s: any) => [s.SiteID, s.ActiveAlarmCount]));
    };
    const open = async (site: number) => (await api.active([site])).body.length;
    const counts = await sites();
    expect(counts).toEqual({ 1: await open(1), 2: await open(2), 3: await open(3), 4: 0 });
    expect(counts[1]).toBeGreaterThan(0);
    const id = (
      await api.send({ siteId: 4, alarmType: 'Count', message: 'm', timestamp: minutesAgo(1) })
    ).body.SiteAlarmLogID;
    expect((await sites())[4]).toBe(1);
    await api.resolve(4, [{ SiteAlarmLogID: id }]);
    expect((await sites())[4]).toBe(0);
  });

  it('the OpenAPI document describes the four routes: operationId, tags, lifecycle, codes, statuses', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const ops = {
      '/v1/edge/alarms': ['sendAlarm', '201'],
      '/v1/edge/alarms/batch': ['sendAlarmBatch', '201'],
      '/v1/edge/alarms/resolve': ['resolveAlarms', '200'],
      '/v1/edge/alarms/active': ['listActiveAlarms', '200'],
    };
    for (const [path, [operationId, ok]] of Object.entries(ops)) {
      const op = doc.paths[path].post;
      expect(op.operationId).toBe(operationId);
      expect(op.tags).toEqual(['alarms']);
      expect(op.summary).toBeTruthy();
      expect(Object.keys(op.responses).sort()).toEqual(
        expect.arrayContaining([ok, '400', '401', '403', '429']),
      );
      if (path !== '/v1/edge/alarms/active') expect(op.responses).toHaveProperty('404');
    }
    expect(doc.paths['/v1/edge/alarms'].post.description).toMatch(
      /1 flow meter, 2 pump, 3 tank group, 5 sensor, null for a site alarm/,
    );
    expect(doc.paths['/v1/edge/alarms'].post.description).toMatch(
      /next send of its key creates a new alarm/,
    );
    expect(doc.paths['/v1/edge/alarms/resolve'].post.description).toMatch(/already_resolved/);
  });
});
