import { afterAll, beforeAll, expect, it } from 'vitest';
import { storeAlarms, parseAlarm } from '../../src/alarms/send.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { METER, PUMP, SENSOR, SENSOR_2, SITE2_SENSOR, TANK } from '../telemetry/fixtures.js';
import { listen, openStream, type Stream, closeStreams } from './fixtures.js';

// What a stream carries: the snapshot first, then each kind of event as its write commits, and
// nothing for a write that stored nothing or failed.

const DEMO = { sites: 2, transactionsPerSite: 0, imagesPerSite: 0 };
/** Times from one anchor, so that no expectation moves when a minute turns during the suite. */
const T0 = Math.floor(Date.now() / 60_000) * 60_000;
const minutesAgo = (m: number) => new Date(T0 - m * 60_000).toISOString();

describeEachBackend('GET /v1/stream: snapshot and events', (backend) => {
  let ctx: TestContext;
  let base: string;
  let token: string;
  let s: Stream;
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: DEMO });
    base = await listen(ctx.app);
    token = await ctx.token();
  });
  afterAll(async () => {
    closeStreams(); // the one stream of every test here, and any a failed test left open
    await ctx?.close();
  });

  const post = async (url: string, payload: unknown) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/edge/${url}`,
      headers: bearer(token),
      payload: payload as object,
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
  /** The next event after those seen so far. */
  let seen = 0;
  const next = async (type?: string) => {
    const e = await s.next(() => true, { from: seen });
    seen = s.events.indexOf(e) + 1;
    if (type) expect(e.type, JSON.stringify(e.data)).toBe(type);
    return e;
  };
  /** A reading of SENSOR_2 whose event shows that nothing was sent in between. */
  let marks = 0;
  const marker = async () => {
    const value = ++marks;
    await post('readings/sensor', {
      sensorID: SENSOR_2,
      value,
      timestamp: new Date(Date.now() + marks).toISOString(),
    });
    const e = await next('reading');
    expect(e.data.record).toMatchObject({ sensorID: SENSOR_2, value });
  };

  it('starts with a snapshot of the streamed sites: LastCommunication, Current and ActiveAlarms as the other routes show them', async () => {
    await post('readings/sensor', { sensorID: SENSOR, value: 1.5, timestamp: minutesAgo(5) });
    await post('alarms', {
      siteId: 1,
      sitePumpID: PUMP,
      alarmType: 'PumpTrip',
      message: 'tripped',
      timestamp: minutesAgo(4),
    });
    s = openStream(base, token, { siteIds: '1,2' });
    const snap = await next('snapshot');
    expect(snap.id).toMatch(/^[0-9a-z.~]+-[0-9a-z]+$/);
    const sites = (
      await ctx.app.inject({
        method: 'GET',
        url: '/v1/sites?page=1&perPage=10&dataType=additional',
        headers: bearer(token),
      })
    ).json().data;
    const active = await post('alarms/active', { siteIds: [1, 2] });
    expect(snap.data.sites).toEqual(
      sites.map((site: any) => ({
        SiteID: site.SiteID,
        LastCommunication: site.LastCommunication,
        Current: site.Current,
        ActiveAlarms: active.filter((a: any) => a.SiteID === site.SiteID),
        // No Sparkplug edge node was ever seen here (test/mqtt/sparkplug.test.ts shows them).
        Edge: [],
      })),
    );
    expect(snap.data.sites[0].Current.sensors).toEqual([
      { sensorID: SENSOR, value: 1.5, timestamp: minutesAgo(5) },
    ]);
    expect(snap.data.sites[0].ActiveAlarms).toHaveLength(1);
    expect(snap.data.sites[0].LastCommunication).not.toBeNull();
  });

  it('reading: each reading that replaced a current value, as stored; none for an older one', async () => {
    await post('readings/sensor', {
      sensorID: SENSOR,
      value: 2.5,
      timestamp: minutesAgo(3),
      extra: 'ignored',
    });
    const e = await next('reading');
    expect(e.data).toEqual({
      siteId: 1,
      kind: 'sensor',
      record: { sensorID: SENSOR, value: 2.5, timestamp: minutesAgo(3) },
    });
    expect(
      (await post('readings/sensor', { sensorID: SENSOR, value: 9, timestamp: minutesAgo(10) }))
        .duplicates,
    ).toBe(1);
    await marker();
    await post('readings/generic', {
      readings: [
        { flowMeterID: METER, totalVolume: 10, timestamp: minutesAgo(2) },
        { sitePumpID: PUMP, running: true, status: 'Running', timestamp: minutesAgo(2) },
        { siteTankGroupID: TANK, entryTankLevel: 3, timestamp: minutesAgo(2) },
        { sensorID: SITE2_SENSOR, value: 4, timestamp: minutesAgo(2) },
      ],
    });
    const got = [
      await next('reading'),
      await next('reading'),
      await next('reading'),
      await next('reading'),
    ].map((x) => x.data);
    expect(got.map((d) => [d.siteId, d.kind]).sort()).toEqual([
      [1, 'meter'],
      [1, 'pump'],
      [1, 'tank'],
      [2, 'sensor'],
    ]);
    expect(got.find((d) => d.kind === 'pump').record).toEqual({
      sitePumpID: PUMP,
      running: true,
      status: 'Running',
      timestamp: minutesAgo(2),
    });
  });

  it('logs: one per upload, site and kind that stored logs, with the equipment, time range and count; none for a replay', async () => {
    const batch = [10, 11, 12].flatMap((m) => [
      { sensorID: SENSOR, value: m, timestamp: minutesAgo(m) },
      { sensorID: SENSOR_2, value: m, timestamp: minutesAgo(m) },
    ]);
    await post('logs/sensor/batch', batch);
    expect((await next('logs')).data).toEqual({
      siteId: 1,
      kind: 'sensor',
      ids: [SENSOR, SENSOR_2],
      from: minutesAgo(12),
      to: minutesAgo(10),
      count: 6,
    });
    expect((await post('logs/sensor/batch', batch)).stored).toBe(0);
    await marker();
    // A replay that changes one value stores (and announces) only that one.
    await post(
      'logs/sensor/batch',
      batch.map((r, i) => (i === 1 ? { ...r, value: 99 } : r)),
    );
    expect((await next('logs')).data).toEqual({
      siteId: 1,
      kind: 'sensor',
      ids: [SENSOR_2],
      from: minutesAgo(10),
      to: minutesAgo(10),
      count: 1,
    });
    await post('logs/generic', [
      { sensorID: SENSOR, value: 1, timestamp: minutesAgo(20) },
      { sitePumpID: PUMP, running: false, timestamp: minutesAgo(21) },
      { sitePumpID: PUMP, running: true, timestamp: minutesAgo(22) },
      { sensorID: SITE2_SENSOR, value: 1, timestamp: minutesAgo(20) },
    ]);
    const got = [await next('logs'), await next('logs'), await next('logs')].map((x) => x.data);
    expect(got.sort((a, b) => a.siteId - b.siteId || a.kind.localeCompare(b.kind))).toEqual([
      { siteId: 1, kind: 'pump', ids: [PUMP], from: minutesAgo(22), to: minutesAgo(21), count: 2 },
      {
        siteId: 1,
        kind: 'sensor',
        ids: [SENSOR],
        from: minutesAgo(20),
        to: minutesAgo(20),
        count: 1,
      },
      {
        siteId: 2,
        kind: 'sensor',
        ids: [SITE2_SENSOR],
        from: minutesAgo(20),
        to: minutesAgo(20),
        count: 1,
      },
    ]);
  });

  it('alarm: created, duplicate and resolved, each with the record as the active list shows it after the change', async () => {
    const [sent] = [
      await post('alarms', {
        siteId: 1,
        sensorID: SENSOR,
        alarmType: 'High',
        message: 'high',
        value: 5,
        timestamp: minutesAgo(3),
      }),
    ];
    const created = await next('alarm');
    const [listed] = (await post('alarms/active', { siteIds: [1] })).filter(
      (a: any) => a.SiteAlarmLogID === sent.SiteAlarmLogID,
    );
    expect(created.data).toEqual({ siteId: 1, status: 'created', alarm: listed });
    await post('alarms', {
      siteId: 1,
      sensorID: SENSOR,
      alarmType: 'High',
      severity: 'critical',
      message: 'higher',
      value: 6,
      timestamp: minutesAgo(2),
    });
    const dup = await next('alarm');
    expect(dup.data).toMatchObject({
      siteId: 1,
      status: 'duplicate',
      alarm: {
        SiteAlarmLogID: sent.SiteAlarmLogID,
        Occurrences: 2,
        Severity: 'critical',
        Message: 'higher',
        Value: 6,
        LastSeen: minutesAgo(2),
      },
    });
    await post('alarms/resolve', {
      siteId: 1,
      alarms: [{ SiteAlarmLogID: sent.SiteAlarmLogID, note: 'fixed' }],
    });
    const resolved = await next('alarm');
    expect(resolved.data).toEqual({ siteId: 1, status: 'resolved', alarm: dup.data.alarm });
    // Resolving again changes nothing, so announces nothing.
    await post('alarms/resolve', { siteId: 1, alarms: [{ SiteAlarmLogID: sent.SiteAlarmLogID }] });
    await marker();
  });

  it('config: one per site whose configuration an import changed; none for an import that changed nothing', async () => {
    const doc = generateDemo(DEMO);
    await importDocument(ctx.db, { sensors: doc.sensors });
    await marker(); // an unchanged import
    const renamed = doc.sensors!.map((x) =>
      x.SiteSensorID === SENSOR ? { ...x, Name: 'Renamed sensor' } : x,
    );
    await importDocument(ctx.db, { sensors: renamed });
    expect((await next('config')).data).toEqual({ siteId: 1 });
    await marker();
  });

  it('nothing for a write that failed: its events roll back with it', async () => {
    const alarm = parseAlarm(
      { alarmType: 'RolledBack', message: 'never', timestamp: minutesAgo(1) },
      0,
      '',
    );
    await expect(
      ctx.db.transaction(async (tx) => {
        await storeAlarms(tx, 1, [alarm]);
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    const refused = await ctx.app.inject({
      method: 'POST',
      url: '/v1/edge/readings/sensor',
      headers: bearer(token),
      payload: { sensorID: SENSOR, value: 'x', timestamp: minutesAgo(0) },
    });
    expect(refused.statusCode).toBe(400);
    await marker();
    expect(s.events.slice(seen).length).toBe(0);
  });
});
