import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { updateClient } from '../../src/auth/clients.js';
import {
  bearer,
  describeEachBackend,
  startApp,
  testSettings,
  type TestContext,
} from '../helper.js';
import {
  fingerprint,
  requestFor,
  routeRequests,
  securedRoutes,
  siteOne,
  type RouteRequest,
  type SiteOne,
} from './routes-fixture.js';

// The access matrix, built from the app's own route table: every route that needs a token refuses
// every kind of bad token with 401, and a client of another company naming site 1's site,
// equipment, images, alarms, tickets or clients gets 403, with nothing stored and no message
// naming what it asked for. A route without an entry in the fixture fails the first test.

const SECRET = testSettings().JWT_SECRET!;
const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
function jwt(header: object, claims: object, key: string | undefined, hash = 'sha256'): string {
  const head = `${b64(header)}.${b64(claims)}`;
  return `${head}.${key ? createHmac(hash, key).update(head).digest('base64url') : randomBytes(64).toString('base64url')}`;
}

describeEachBackend('access matrix over every route', (backend) => {
  let ctx: TestContext;
  let owner: string;
  let foreign: string;
  let one: SiteOne;
  let table: ReturnType<typeof routeRequests>;
  let n = 0;
  const call = (r: RouteRequest, headers: Record<string, string>) =>
    ctx.app.inject({
      method: r.method,
      url: r.url,
      headers,
      ...(r.body !== undefined ? { payload: r.body as object } : {}),
    });
  const requests = () =>
    securedRoutes(ctx).map(([method, url]) => ({
      key: `${method} ${url}`,
      req: requestFor(table, method, url, n++),
    }));

  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 2, transactionsPerSite: 2, imagesPerSite: 2 },
      settings: { ROLLUP_REFRESH_MS: 0 },
    });
    owner = await ctx.token('*', { clientId: 'owner', admin: true, cameraIds: '*' });
    foreign = await ctx.token([2], { clientId: 'foreign', admin: true, cameraIds: [20701, 20702] });
    one = await siteOne(ctx, owner);
    table = routeRequests(one);
  });
  afterAll(async () => ctx?.close());

  it('has a valid request for every route that needs a token, and none for a route that is gone', async () => {
    const routes = securedRoutes(ctx);
    expect(routes.length).toBeGreaterThanOrEqual(80);
    expect(
      routes.filter(([m, u]) => !requestFor(table, m, u, 0)).map(([m, u]) => `${m} ${u}`),
    ).toEqual([]);
    const known = new Set(routes.map(([m, u]) => `${m} ${u}`));
    expect(Object.keys(table).filter((k) => !known.has(k))).toEqual([]);
    // Each request is right for a client that reaches site 1, so the refusals below are the token's or the tenant's doing.
    for (const { key, req } of requests()) {
      if (req!.streams) continue;
      const res = await call(req!, bearer(owner));
      expect(res.statusCode, `${key}: ${res.body.slice(0, 300)}`).toBeLessThan(300);
    }
  });

  it('answers 401 with the error body on every route for every kind of bad token, storing nothing', async () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: 'owner', iat: now, exp: now + 600, jti: 'j' };
    const disabled = await ctx.token([1], { clientId: 'disabled-later' });
    await updateClient(ctx.db, 'disabled-later', { disabled: true });
    const cases: Record<string, Record<string, string>> = {
      'no token': {},
      'not bearer': { authorization: 'Basic b3duZXI6eA==' },
      malformed: bearer('not-a-jwt'),
      'three dots of garbage': bearer('a.b.c'),
      expired: bearer(
        jwt({ alg: 'HS256', typ: 'JWT' }, { ...claims, iat: now - 7200, exp: now - 3600 }, SECRET),
      ),
      'wrong key': bearer(
        jwt({ alg: 'HS256', typ: 'JWT' }, claims, 'another-secret-of-plenty-length!!'),
      ),
      'alg none': bearer(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`),
      HS512: bearer(jwt({ alg: 'HS512', typ: 'JWT' }, claims, SECRET, 'sha512')),
      RS256: bearer(jwt({ alg: 'RS256', typ: 'JWT' }, claims, undefined)),
      'unknown client': bearer(
        jwt({ alg: 'HS256', typ: 'JWT' }, { ...claims, sub: 'ghost' }, SECRET),
      ),
      'disabled client': bearer(disabled),
    };
    // The forging is right: the same claims signed properly pass.
    expect(
      (
        await call(
          { method: 'GET', url: '/v1/sites?page=1&perPage=1' },
          bearer(jwt({ alg: 'HS256', typ: 'JWT' }, claims, SECRET)),
        )
      ).statusCode,
    ).toBe(200);
    const before = await fingerprint(ctx.db);
    for (const { key, req } of requests())
      for (const [name, headers] of Object.entries(cases)) {
        const res = await call(req!, headers);
        expect(res.statusCode, `${key} with ${name}`).toBe(401);
        expect(res.json(), `${key} with ${name}`).toEqual({
          statusCode: 401,
          error: 'Unauthorized',
          message: expect.any(String),
        });
      }
    expect(await fingerprint(ctx.db)).toEqual(before);
  });

  it("answers 403 to a client of another company on every route naming site 1's things, storing nothing and naming none of them", async () => {
    const named = [
      /\b1\b/,
      /\b10(100|301|401|501|799)\b/,
      new RegExp(one.ticketUuid),
      new RegExp(one.motionUuid),
      new RegExp(`\\b${one.alarmId}\\b`),
      /site-one-client/,
      /owner/,
    ];
    const before = await fingerprint(ctx.db);
    for (const { key, req } of requests()) {
      const res = await call(req!, bearer(foreign));
      if (key === 'GET /v1/sites') {
        // A list: only the client's own sites.
        expect(res.statusCode).toBe(200);
        expect(res.json().data.map((s: { SiteID: number }) => s.SiteID)).toEqual([2]);
        continue;
      }
      if (key === 'GET /v1/me') {
        // Its own record: nothing of site 1.
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({
          clientId: 'foreign',
          role: 'full',
          admin: true,
          siteIds: [2],
          cameraIds: [20701, 20702],
        });
        continue;
      }
      if (key === 'GET /v1/admin/clients') {
        // Only the clients within its own sites: itself.
        expect(res.statusCode).toBe(200);
        expect(res.json().data.map((c: { clientId: string }) => c.clientId)).toEqual(['foreign']);
        continue;
      }
      expect(res.statusCode, `${key}: ${res.body.slice(0, 300)}`).toBe(403);
      expect(res.json()).toMatchObject({ statusCode: 403, error: 'Forbidden' });
      for (const id of named) expect(res.body, `${key} names ${id}`).not.toMatch(id);
    }
    // At its own site, naming site 1's equipment or alarm: still 403 (or, for an alarm id, 404: ids are per site), naming none of them.
    const own = [
      {
        method: 'POST',
        url: '/v1/edge/alarms',
        body: {
          siteId: 2,
          sensorID: 10100,
          alarmType: 'x',
          message: 'm',
          timestamp: '2026-11-01T00:00:00Z',
        },
      },
      {
        method: 'POST',
        url: '/v1/edge/alarms/batch',
        body: {
          siteId: 2,
          alarms: [
            { sitePumpID: 10401, alarmType: 'x', message: 'm', timestamp: '2026-11-01T00:00:00Z' },
          ],
        },
      },
      {
        method: 'POST',
        url: '/v1/edge/logs/generic',
        body: [
          { sensorID: 20100, value: 1, timestamp: '2026-11-01T00:00:00Z' },
          { sensorID: 10100, value: 1, timestamp: '2026-11-01T00:00:00Z' },
        ],
      },
    ] as RouteRequest[];
    for (const req of own) {
      const res = await call(req, bearer(foreign));
      expect(res.statusCode, `${req.url}: ${res.body}`).toBe(403);
      for (const id of named) expect(res.body, `${req.url} names ${id}`).not.toMatch(id);
    }
    const resolve = await call(
      {
        method: 'POST',
        url: '/v1/edge/alarms/resolve',
        body: { siteId: 2, alarms: [{ SiteAlarmLogID: one.alarmId }] },
      },
      bearer(foreign),
    );
    // It names the id asked for and the client's own site, nothing of site 1.
    expect(resolve.statusCode).toBe(404);
    expect(resolve.json().message).toBe(`alarm ${one.alarmId} does not exist at site 2`);
    expect(await fingerprint(ctx.db)).toEqual(before);
  });
});
