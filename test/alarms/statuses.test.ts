import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import {
  alarmClient,
  alarmRows,
  minutesAgo,
  PUMP,
  SENSOR,
  SITE2_SENSOR,
  TANK,
  type AlarmClient,
} from './fixtures.js';

const ROUTES = ['alarms', 'alarms/batch', 'alarms/resolve', 'alarms/active'];
const NO_SITE = 'no access to one or more of the requested sites';

describeEachBackend('alarm routes: every status', (backend) => {
  let ctx: TestContext;
  let all: AlarmClient;
  let site2: AlarmClient;
  const ts = minutesAgo(5);
  const valid = {
    siteId: 1,
    sensorID: SENSOR,
    alarmType: 'HighPressure',
    message: 'above limit',
    value: 12,
    timestamp: ts,
  };
  const item = { alarmType: 'Batch', message: 'm', timestamp: ts };
  beforeAll(async () => {
    ctx = await startApp(backend, { settings: { MAX_BATCH: 10 } });
    all = alarmClient(ctx, await ctx.token('*'));
    site2 = alarmClient(ctx, await ctx.token([2]));
  });
  afterAll(async () => ctx?.close());

  /** Runs the refusals and checks that none of them changed a row. */
  const unchanged = async (work: () => Promise<void>) => {
    const before = await alarmRows(ctx.db);
    await work();
    expect(await alarmRows(ctx.db)).toEqual(before);
  };
  const detailPaths = (res: { body: { details?: { path: string }[] } }) =>
    res.body.details?.map((d) => d.path);

  it('400: invalid alarms, naming the field (and the index in a batch); nothing stored', async () => {
    await unchanged(async () => {
      const cases: [unknown, string][] = [
        [{ ...valid, sitePumpID: PUMP }, '/sensorID'],
        [{ ...valid, timestamp: 'yesterday' }, '/timestamp'],
        [
          { ...valid, timestamp: new Date(Date.now() + 25 * 3_600_000).toISOString() },
          '/timestamp',
        ],
        [{ ...valid, timestamp: '1969-12-31T23:59:59Z' }, '/timestamp'],
        [{ ...valid, severity: 'fatal' }, '/severity'],
        [{ ...valid, alarmType: '' }, '/alarmType'],
        [{ ...valid, alarmType: undefined }, '/alarmType'],
        [{ ...valid, message: undefined }, '/message'],
        [{ ...valid, timestamp: undefined }, '/timestamp'],
        [{ ...valid, siteId: undefined }, '/siteId'],
        [{ ...valid, siteId: '1' }, '/siteId'],
        [{ ...valid, sensorID: 0 }, '/sensorID'],
        [{ ...valid, value: 1e308 }, '/value'],
        [{ ...valid, value: -2e15 }, '/value'],
        [
          '{"siteId":1,"alarmType":"x","message":"m","value":1e999,"timestamp":"2026-01-01T00:00:00Z"}',
          '/value',
        ],
      ];
      for (const [body, path] of cases) {
        const res = await all.send(body);
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
        expect(detailPaths(res)?.[0], JSON.stringify(body)).toBe(path);
      }
      const batch = await all.batch(1, [item, item, { ...item, timestamp: 'soon' }]);
      expect(batch.status).toBe(400);
      expect(detailPaths(batch)).toEqual(['/alarms/2/timestamp']);
      expect(
        (await all.batch(1, [item, { ...item, sensorID: SENSOR, siteTankGroupID: TANK }])).body
          .details[0],
      ).toEqual({
        path: '/alarms/1/sensorID',
        message:
          '/alarms/1/sensorID an alarm names at most one of flowMeterID, sitePumpID, siteTankGroupID, sensorID (this one has siteTankGroupID, sensorID)',
      });
      expect(detailPaths(await all.batch(1, [item, { message: 'm', timestamp: ts }]))).toEqual([
        '/alarms/1/alarmType',
      ]);
      expect(detailPaths(await all.post('alarms/batch', { alarms: [item] }))).toEqual(['/siteId']);
      expect((await all.batch(1, Array(11).fill(item))).status).toBe(400); // MAX_BATCH is 10 here
      expect((await all.post('alarms/batch', [item])).status).toBe(400);
    });
  });

  it('400: equipment of another reachable site than siteId, after the site check (403 when out of reach); nothing stored', async () => {
    await unchanged(async () => {
      const res = await all.batch(2, [
        { ...item, sensorID: SITE2_SENSOR },
        { ...item, sensorID: SENSOR },
      ]);
      expect(res).toEqual({
        status: 400,
        body: {
          statusCode: 400,
          error: 'Bad Request',
          message: `validation failed: sensor ${SENSOR} is not equipment of site 2`,
          details: [
            { path: '/alarms/1/sensorID', message: `sensor ${SENSOR} is not equipment of site 2` },
          ],
        },
      });
      // Equipment of a site out of the client's reach: 403, naming nothing of it.
      const outOfReach = await site2.send({
        ...valid,
        siteId: 2,
        sitePumpID: PUMP,
        sensorID: undefined,
      });
      expect(outOfReach.status).toBe(403);
      expect(JSON.stringify(outOfReach.body)).not.toContain(String(PUMP));
    });
  });

  it('400: resolve without siteId or SiteAlarmLogID, or with an id that cannot be one; nothing resolved', async () => {
    const id = (await all.send({ ...valid, alarmType: 'ToResolve' })).body.SiteAlarmLogID;
    await unchanged(async () => {
      expect(
        detailPaths(await all.post('alarms/resolve', { alarms: [{ SiteAlarmLogID: id }] })),
      ).toEqual(['/siteId']);
      expect(
        detailPaths(await all.resolve(1, [{ SiteAlarmLogID: id }, { note: 'no id' }])),
      ).toEqual(['/alarms/1/SiteAlarmLogID']);
      for (const bad of ['abc', '0', '-5', '9223372036854775808', 2 ** 53 + 2, 1.5, null]) {
        const res = await all.resolve(1, [{ SiteAlarmLogID: id }, { SiteAlarmLogID: bad }]);
        expect(res.status, String(bad)).toBe(400);
        expect(detailPaths(res)?.[0], String(bad)).toMatch(/^\/alarms\/1\/SiteAlarmLogID/);
      }
      expect((await all.post('alarms/resolve', { siteId: 1 })).status).toBe(400);
    });
  });

  it('400: an active-list filter without 1..MAX_BATCH site ids or with a bad limit', async () => {
    for (const body of [
      {},
      { siteIds: [] },
      { siteIds: Array(11).fill(1) },
      { siteIds: ['x'] },
      { siteIds: [1], limit: 0 },
      { siteIds: [1], limit: 11 },
    ])
      expect((await all.post('alarms/active', body)).status, JSON.stringify(body)).toBe(400);
  });

  it('401 on every route without a valid token', async () => {
    for (const url of ROUTES)
      for (const headers of [{}, { authorization: 'Bearer not.a.token' }]) {
        const res = await ctx.app.inject({
          method: 'POST',
          url: `/v1/edge/${url}`,
          headers,
          payload: { siteId: 1, siteIds: [1], alarms: [] },
        });
        expect(res.statusCode, url).toBe(401);
        expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      }
  });

  it('403 for a site out of reach or unknown, on every route, as a whole; nothing stored or resolved', async () => {
    const own = (await site2.send({ ...valid, siteId: 2, sensorID: SITE2_SENSOR })).body
      .SiteAlarmLogID;
    const other = (await all.send({ ...valid, alarmType: 'Site1' })).body.SiteAlarmLogID;
    await unchanged(async () => {
      const refusals = [
        await site2.send(valid),
        await site2.send({ ...valid, sensorID: undefined }),
        await site2.batch(1, [item]),
        await site2.resolve(1, [{ SiteAlarmLogID: other }]),
        await site2.active([2, 1]),
        await all.send({ ...valid, siteId: 999, sensorID: undefined }),
        await all.batch(999, [item]),
        await all.resolve(999, [{ SiteAlarmLogID: own }]),
        await all.active([1, 999]),
        await site2.active([999]),
      ];
      for (const res of refusals)
        expect(res.body).toMatchObject({ statusCode: 403, error: 'Forbidden' });
      expect(refusals[5].body.message).toBe(NO_SITE);
      expect(refusals[8].body.message).toBe(NO_SITE);
      // The equipment's own site is never named: the refusal is about the requested site.
      expect(refusals[0].body.message).not.toMatch(/sensor/);
    });
    expect((await site2.active([2])).body.map((a: any) => a.SiteAlarmLogID)).toContain(own);
  });

  it('404 for equipment that does not exist, before 403, bounded message, details per alarm; nothing stored', async () => {
    await unchanged(async () => {
      expect(await all.send({ ...valid, sensorID: 999 })).toEqual({
        status: 404,
        body: {
          statusCode: 404,
          error: 'Not Found',
          message: 'sensor 999 does not exist',
          details: [{ path: '/sensorID', message: 'sensor 999 does not exist' }],
        },
      });
      // Another kind's id is not this kind's.
      expect((await all.send({ ...valid, sensorID: undefined, flowMeterID: PUMP })).status).toBe(
        404,
      );
      // 404 before 403: the same answer for a client that cannot reach site 1.
      expect((await site2.send({ ...valid, sensorID: 999 })).status).toBe(404);
      const many = await all.batch(1, [
        item,
        ...[901, 902, 903, 904, 905, 906, 907].map((id) => ({ ...item, sensorID: id })),
        { ...item, sitePumpID: 908 },
      ]);
      expect(many.status).toBe(404);
      expect(many.body.message).toBe(
        'sensor 901, 902, 903, 904, 905 and 2 more; pump 908 do not exist',
      );
      expect(detailPaths(many)).toEqual(
        [1, 2, 3, 4, 5, 6, 7].map((i) => `/alarms/${i}/sensorID`).concat('/alarms/8/sitePumpID'),
      );
    });
  });

  it('404 when resolving an id unknown at that site; nothing of the request is resolved', async () => {
    const open = (await all.send({ ...valid, alarmType: 'StaysOpen' })).body.SiteAlarmLogID;
    const atSite2 = (
      await all.send({ ...valid, siteId: 2, sensorID: SITE2_SENSOR, alarmType: 'Site2' })
    ).body.SiteAlarmLogID;
    await unchanged(async () => {
      const res = await all.resolve(1, [
        { SiteAlarmLogID: open },
        { SiteAlarmLogID: '987654321' },
        { SiteAlarmLogID: atSite2 },
      ]);
      expect(res).toEqual({
        status: 404,
        body: {
          statusCode: 404,
          error: 'Not Found',
          message: `alarms 987654321, ${atSite2} do not exist at site 1`,
          details: [
            {
              path: '/alarms/1/SiteAlarmLogID',
              message: 'alarm 987654321 does not exist at site 1',
            },
            {
              path: '/alarms/2/SiteAlarmLogID',
              message: `alarm ${atSite2} does not exist at site 1`,
            },
          ],
        },
      });
    });
    expect((await all.resolve(1, [{ SiteAlarmLogID: open }])).body).toEqual([
      { SiteAlarmLogID: open, status: 'resolved' },
    ]);
  });
});

describeEachBackend('alarm routes: 429 and 413', (backend) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 },
      settings: { RATE_LIMIT_MAX: 4, BODY_LIMIT: 1024 },
    });
  });
  afterAll(async () => ctx?.close());

  it('answers 413 for a body over BODY_LIMIT and 429 with retry-after past the rate limit', async () => {
    const token = await ctx.token('*');
    const api = alarmClient(ctx, token);
    const big = await api.send({
      siteId: 1,
      alarmType: 'Big',
      message: 'x'.repeat(1000),
      timestamp: minutesAgo(1),
      note: 'y'.repeat(100),
    });
    expect(big.body).toMatchObject({ statusCode: 413 });
    // With the 413 above, four requests of this client: the limit. The fifth is refused.
    const statuses = [];
    for (const url of ROUTES.slice(0, 3))
      statuses.push((await api.post(url, { siteId: 1, alarms: [] })).status);
    expect(statuses).toEqual([400, 201, 200]);
    const limited = await api.active([1]);
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    const raw = await ctx.app.inject({
      method: 'POST',
      url: '/v1/edge/alarms',
      headers: bearer(token),
      payload: { siteId: 1 },
    });
    expect(raw.statusCode).toBe(429);
    expect(Number(raw.headers['retry-after'])).toBeGreaterThan(0);
  });
});
