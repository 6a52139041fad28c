import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { allRoutes, DEMO, expectShape, get, IDS, lighten } from './fixture.js';

// Every one of the 42 configuration routes, status by status: 200 in its exact shape, 400, 401,
// 403, 404, and the OpenAPI document listing them.

describeEachBackend('configuration routes: statuses and shapes', (backend) => {
  let ctx: TestContext;
  let all: string;
  let site2: string;
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: DEMO });
    all = await ctx.token('*');
    site2 = await ctx.token([2]);
  });
  afterAll(async () => ctx?.close());

  it('has 42 routes, 21 of them /updates and 20 /light', () => {
    const routes = allRoutes();
    expect(routes).toHaveLength(42);
    expect(new Set(routes.map((r) => r.url)).size).toBe(42);
    expect(routes.filter((r) => r.updates)).toHaveLength(21);
    expect(routes.filter((r) => r.light)).toHaveLength(20);
  });

  it('answers 200 on every route, in exactly the documented shape (no field missing, none extra)', async () => {
    for (const r of allRoutes()) {
      const { status, body } = await get(ctx, r.url, all);
      expect(status, r.url).toBe(200);
      expectShape(body, r.schema, r.url);
      // Asked twice (the second time from the cache for whole-site reads): the same answer.
      expect((await get(ctx, r.url, all)).body, r.url).toEqual(body);
    }
  });

  it('answers a light body equal to the full body with nulls and heavy actuator fields left out', async () => {
    const routes = allRoutes();
    let compared = 0;
    let differing = 0;
    for (const light of routes.filter((r) => r.light)) {
      const full = routes.find((r) => !r.light && r.url === light.url.replace('/light', ''))!;
      const [f, l] = [await get(ctx, full.url, all), await get(ctx, light.url, all)];
      expect(l.body, light.url).toEqual(lighten(f.body));
      compared++;
      if (JSON.stringify(l.body) !== JSON.stringify(f.body)) differing++;
    }
    expect(compared).toBe(20);
    // With startDate before the import every body has nulls to strip.
    expect(differing).toBe(20);
    const { body } = await get(ctx, `/v1/config/site/actuators/light?siteId=1`, all);
    expect(Object.keys(body[0].actuator)).not.toContain('Latitude');
    expect(body[0].actuator.Name).toBe('Inlet Valve 1');
  });

  it('answers 401 on every route without a valid token, before looking at the input', async () => {
    for (const r of allRoutes({ startDate: null })) {
      expect((await get(ctx, r.url)).status, r.url).toBe(401);
      expect((await get(ctx, r.url, 'not.a.token')).status, r.url).toBe(401);
    }
  });

  it('answers 403 on every route for a client limited to another site, and for a site that does not exist', async () => {
    for (const r of allRoutes()) {
      const { status, body } = await get(ctx, r.url, site2);
      expect(status, r.url).toBe(403);
      expect(body).toMatchObject({ statusCode: 403, error: 'Forbidden' });
    }
    for (const r of allRoutes({ siteId: 999 }).filter((x) => !x.byId)) {
      expect((await get(ctx, r.url, all)).status, r.url).toBe(403);
      expect((await get(ctx, r.url, site2)).body, r.url).toEqual((await get(ctx, r.url, all)).body);
    }
    // A site-2 client reaches site 2.
    expect((await get(ctx, '/v1/config/site/compact?siteId=2', site2)).status).toBe(200);
    expect((await get(ctx, '/v1/config/pumps/20401', site2)).status).toBe(200);
  });

  it('answers 404 for equipment that does not exist, to every client (before the access check)', async () => {
    const byId = allRoutes({ id: 999_999 }).filter((r) => r.byId);
    expect(byId).toHaveLength(16);
    for (const r of byId)
      for (const token of [all, site2]) {
        const { status, body } = await get(ctx, r.url, token);
        expect(status, r.url).toBe(404);
        expect(body).toMatchObject({ statusCode: 404, error: 'Not Found' });
      }
    // Ids of another kind are not found either: a pump id is no sensor.
    expect((await get(ctx, `/v1/config/sensors/${IDS.pump}`, all)).status).toBe(404);
  });

  it('answers 400 for a missing or invalid siteId, startDate or path id', async () => {
    const bad = [
      '/v1/config/site',
      '/v1/config/site?siteId=',
      '/v1/config/site/sensors?siteId=abc',
      '/v1/config/site/compact?siteId=0',
      '/v1/config/site/pumps/light?siteId=-3',
      '/v1/config/site/tanks?siteId=1.5',
      '/v1/config/site/actuators?siteId=99999999999',
      '/v1/config/updates/site?siteId=1',
      '/v1/config/updates/site/compact?siteId=1&startDate=',
      '/v1/config/updates/site/meters?startDate=2026-01-01T00:00Z',
      '/v1/config/updates/site/sensors?siteId=1&startDate=not-a-date-at-all',
      '/v1/config/updates/site/actuators?siteId=1&startDate=2026-02-30T00:00Z',
      '/v1/config/updates/site/light?siteId=1&startDate=2026-13-01T00:00:00Z',
      '/v1/config/sensors/abc',
      '/v1/config/meters/0',
      '/v1/config/pumps/-1/light',
      '/v1/config/tanks/1.5',
      '/v1/config/sensors/99999999999',
      '/v1/config/updates/sensors/10100',
      '/v1/config/updates/meters/10301/light?startDate=yesterday-ish',
      '/v1/config/updates/tanks/x?startDate=2026-01-01T00:00Z',
    ];
    for (const url of bad) {
      const { status, body } = await get(ctx, url, all);
      expect(status, url).toBe(400);
      expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(typeof body.message).toBe('string');
    }
    const { body } = await get(
      ctx,
      '/v1/config/updates/site?siteId=1&startDate=not-a-date-at-all',
      all,
    );
    expect(body.details).toEqual([expect.objectContaining({ path: '/startDate' })]);
    // Every /updates route requires startDate.
    for (const r of allRoutes({ startDate: null }).filter((x) => x.updates))
      expect((await get(ctx, r.url, all)).status, r.url).toBe(400);
    // 400 comes before 403 and 404: the input is checked first.
    expect(
      (await get(ctx, '/v1/config/updates/site?siteId=1&startDate=nonsense-date', site2)).status,
    ).toBe(400);
    expect(
      (await get(ctx, '/v1/config/updates/sensors/999999?startDate=nonsense-date', all)).status,
    ).toBe(400);
  });

  it('accepts any ISO 8601 startDate with a time of day: with an offset, without one (UTC); a date alone is a 400', async () => {
    for (const d of [
      '2026-01-01T00:00Z',
      '2026-01-01T10:00:00+02:00',
      '2026-01-01T10:00:00.123Z',
      '2026-01-01T10:00',
    ])
      expect(
        (
          await get(
            ctx,
            `/v1/config/updates/site/sensors?siteId=1&startDate=${encodeURIComponent(d)}`,
            all,
          )
        ).status,
        d,
      ).toBe(200);
    expect(
      (await get(ctx, '/v1/config/updates/site/sensors?siteId=1&startDate=2026-01-01', all)).status,
    ).toBe(400);
  });

  it('sends whole-site bodies gzipped to a client that asks for it, the same JSON once unzipped', async () => {
    for (const url of [
      '/v1/config/site/compact?siteId=1',
      '/v1/config/site/light?siteId=2',
      '/v1/config/site/pumps?siteId=1',
    ]) {
      const plain = await ctx.app.inject({ method: 'GET', url, headers: bearer(all) });
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.headers.vary).toContain('accept-encoding');
      const zipped = await ctx.app.inject({
        method: 'GET',
        url,
        headers: { ...bearer(all), 'accept-encoding': 'br, gzip;q=0.8' },
      });
      expect(zipped.statusCode).toBe(200);
      expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(zipped.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(zipped.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3);
      expect(JSON.parse(gunzipSync(zipped.rawPayload).toString())).toEqual(plain.json());
    }
  });

  it('answers 429 past the rate limit, with the error body', async () => {
    const small = await startApp(backend, {
      demo: {
        sites: 1,
        sensorsPerSite: 1,
        metersPerSite: 1,
        pumpsPerSite: 1,
        tanksPerSite: 1,
        transactionsPerSite: 0,
        imagesPerSite: 0,
      },
      settings: { RATE_LIMIT_MAX: 3 },
    });
    try {
      const t = await small.token('*');
      const urls = [
        '/v1/config/site/compact?siteId=1',
        `/v1/config/sensors/${IDS.sensor}`,
        '/v1/config/updates/site?siteId=1&startDate=2020-01-01T00:00Z',
        '/v1/config/site/light?siteId=1',
        `/v1/config/pumps/${IDS.pump}/light`,
      ];
      const answers = [];
      for (const url of urls) answers.push(await get(small, url, t));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429]);
      expect(answers[3].body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    } finally {
      await small.close();
    }
  });

  it('documents all 42 routes in /openapi.json with their statuses', async () => {
    const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/v1/config/'));
    expect(paths).toHaveLength(42);
    for (const p of paths) {
      const statuses = Object.keys(doc.paths[p].get.responses).sort();
      const byId = /\{\w+\}/.test(p);
      expect(statuses, p).toEqual(
        byId
          ? ['200', '400', '401', '403', '404', '429', '503']
          : ['200', '400', '401', '403', '429', '503'],
      );
      expect(doc.paths[p].get.security, p).toEqual([{ bearer: [] }]);
    }
    expect(paths).toContain('/v1/config/updates/tanks/{tankGroupId}/light');
    expect(paths).toContain('/v1/config/updates/site/compact');
    expect(paths).not.toContain('/v1/config/site/compact/light');
  });
});
