import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { KINDS, PUMP, poster, SITE2_PUMP, SITE2_SENSOR, snapshot, VALID } from './fixtures.js';

/** Every upload route with a valid body of one record made by `record`. */
const ROUTES = KINDS.flatMap((kind) => [
  { url: `logs/${kind}`, body: (ts: string) => VALID[kind](ts) },
  { url: `logs/${kind}/batch`, body: (ts: string) => [VALID[kind](ts)] },
  { url: `readings/${kind}`, body: (ts: string) => VALID[kind](ts) },
  { url: `readings/${kind}/batch`, body: (ts: string) => ({ readings: [VALID[kind](ts)] }) },
]).concat([
  { url: 'logs/generic', body: (ts: string) => [VALID.sensor(ts), VALID.pump(ts)] },
  {
    url: 'readings/generic',
    body: (ts: string) => ({ readings: [VALID.meter(ts), VALID.tank(ts)] }),
  },
]);

describeEachBackend('telemetry upload routes and access', (backend) => {
  let ctx: TestContext;
  let all: ReturnType<typeof poster>;
  let site2: ReturnType<typeof poster>;
  beforeAll(async () => {
    ctx = await startApp(backend);
    all = poster(ctx, await ctx.token('*'));
    site2 = poster(ctx, await ctx.token([2]));
  });
  afterAll(async () => ctx?.close());

  it('has the 18 routes, each answering 201 with the counts to a valid body', async () => {
    expect(ROUTES).toHaveLength(18);
    for (const [i, r] of ROUTES.entries()) {
      const res = await all(r.url, r.body(`2026-05-01T00:${String(i).padStart(2, '0')}:00Z`));
      expect(res, r.url).toEqual({
        status: 201,
        body: { received: expect.any(Number), stored: expect.any(Number), duplicates: 0 },
      });
      expect(res.body.stored, r.url).toBe(res.body.received);
    }
  });

  it('answers 401 without a valid token on every route, storing nothing', async () => {
    const before = await snapshot(ctx.db);
    for (const r of ROUTES)
      for (const headers of [{}, { authorization: 'Bearer not.a.token' }]) {
        const res = await ctx.app.inject({
          method: 'POST',
          url: `/v1/edge/${r.url}`,
          headers,
          payload: r.body('2026-05-02T00:00:00Z') as object,
        });
        expect(res.statusCode, r.url).toBe(401);
        expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      }
    expect(await snapshot(ctx.db)).toEqual(before);
  });

  it('answers 404 for equipment that does not exist, naming it, and stores nothing of the request', async () => {
    const before = await snapshot(ctx.db);
    const ts = '2026-05-03T00:00:00Z';
    const single = await all('logs/sensor', { sensorID: 999, value: 1, timestamp: ts });
    expect(single).toEqual({
      status: 404,
      body: {
        statusCode: 404,
        error: 'Not Found',
        message: 'sensor 999 does not exist',
        details: [{ path: '/sensorID', message: 'sensor 999 does not exist' }],
      },
    });
    const batch = await all('logs/sensor/batch', [
      VALID.sensor(ts),
      { ...VALID.sensor(ts), sensorID: 998 },
    ]);
    expect(batch.status).toBe(404);
    expect(batch.body.details).toEqual([
      { path: '/1/sensorID', message: 'sensor 998 does not exist' },
    ]);
    const generic = await all('readings/generic', {
      readings: [
        VALID.sensor(ts),
        { ...VALID.pump(ts), sitePumpID: 997 },
        { ...VALID.tank(ts), siteTankGroupID: 996 },
      ],
    });
    expect(generic.status).toBe(404);
    expect(generic.body.message).toBe('pump 997; tank group 996 do not exist');
    expect(generic.body.details.map((d: { path: string }) => d.path)).toEqual([
      '/readings/1/sitePumpID',
      '/readings/2/siteTankGroupID',
    ]);
    // An id of another kind is not this kind's: a pump id sent as a sensor is unknown.
    expect((await all('readings/sensor', { sensorID: PUMP, value: 1, timestamp: ts })).status).toBe(
      404,
    );
    expect(await snapshot(ctx.db)).toEqual(before);
  });

  it('answers 403 as a whole when any entry belongs to a site out of reach, and 404 before 403', async () => {
    const before = await snapshot(ctx.db);
    const ts = '2026-05-04T00:00:00Z';
    const own = { sensorID: SITE2_SENSOR, value: 1, timestamp: ts };
    const res = await site2('logs/sensor', VALID.sensor(ts));
    expect(res).toEqual({
      status: 403,
      body: {
        statusCode: 403,
        error: 'Forbidden',
        message: 'no access to one or more of the requested sites',
      },
    });
    expect((await site2('logs/sensor/batch', [own, VALID.sensor(ts)])).status).toBe(403);
    expect((await site2('logs/generic', [own, VALID.pump(ts)])).status).toBe(403);
    expect((await site2('readings/generic', { readings: [own, VALID.tank(ts)] })).status).toBe(403);
    expect(
      (
        await site2('readings/pump/batch', {
          readings: [{ sitePumpID: SITE2_PUMP, timestamp: ts }, VALID.pump(ts)],
        })
      ).status,
    ).toBe(403);
    // Unknown and out of reach in one request: the 404, the same answer any client gets.
    expect(
      (await site2('logs/sensor/batch', [VALID.sensor(ts), { ...own, sensorID: 999 }])).status,
    ).toBe(404);
    expect(await snapshot(ctx.db)).toEqual(before);
    expect(await site2('logs/sensor/batch', [own])).toEqual({
      status: 201,
      body: { received: 1, stored: 1, duplicates: 0 },
    });
  });

  it('finds equipment imported after the service started, though an earlier request saw it missing', async () => {
    const ts = '2026-05-05T00:00:00Z';
    expect((await all('logs/sensor', { sensorID: 10199, value: 1, timestamp: ts })).status).toBe(
      404,
    );
    await ctx.db.query(
      `INSERT INTO sensors (sensor_id, site_id, name, units, active) VALUES (10199, 1, 'late sensor', 'psi', true)`,
    );
    expect((await all('logs/sensor', { sensorID: 10199, value: 1, timestamp: ts })).status).toBe(
      201,
    );
  });
});
