import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { ROOT } from './process.js';

// What the README promises of every route: validation errors that name the field and the allowed
// values once, 415 for any body that is not JSON, the rate-limit headers, 500 listed on uploads,
// and a /docs page that works over plain HTTP from another host.

describeEachBackend('HTTP conventions', (backend) => {
  let ctx: TestContext;
  let token: string;
  let admin: string;
  const get = (url: string, headers: Record<string, string> = bearer(token)) =>
    ctx.app.inject({ method: 'GET', url, headers });
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 } });
    token = await ctx.token('*');
    admin = await ctx.token('*', { clientId: 'admin', admin: true, cameraIds: '*' });
  });
  afterAll(async () => ctx?.close());

  const detailsOf = async (res: Awaited<ReturnType<typeof get>>) => {
    expect(res.statusCode, res.body).toBe(400);
    return res.json().details;
  };

  it('names the field and the allowed values once for a bad enumeration', async () => {
    const res = await get('/v1/sites?page=1&perPage=10&dataType=bogus');
    expect(res.json()).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'validation failed: query parameter dataType must be one of: basic, additional',
      details: [
        {
          path: '/dataType',
          message: 'query parameter dataType must be one of: basic, additional',
        },
      ],
    });
    expect(await detailsOf(await get('/v1/sites?page=1&perPage=10&sortBy=size'))).toEqual([
      {
        path: '/sortBy',
        message:
          'query parameter sortBy must be one of platformcompanyid, projectid, name; case is ignored',
      },
    ]);
  });

  it('gives one detail per problem: missing, out of range, mistyped, in the query, the path or the body', async () => {
    expect(await detailsOf(await get('/v1/sites?perPage=10'))).toEqual([
      { path: '/page', message: 'query parameter page is required' },
    ]);
    expect(await detailsOf(await get('/v1/sites?page=1&perPage=0'))).toEqual([
      { path: '/perPage', message: 'query parameter perPage must be >= 1' },
    ]);
    expect(await detailsOf(await get('/v1/config/sensors/abc'))).toEqual([
      { path: '/sensorId', message: 'path parameter sensorId must be integer' },
    ]);
    const token400 = await ctx.app.inject({
      method: 'POST',
      url: '/token',
      payload: { clientId: 5, clientSecret: 'x' },
    });
    expect(await detailsOf(token400)).toEqual([
      { path: '/clientId', message: '/clientId must be string' },
    ]);
    const create = (body: object) =>
      ctx.app.inject({
        method: 'POST',
        url: '/v1/admin/clients',
        headers: bearer(admin),
        payload: body,
      });
    expect(await detailsOf(await create({ clientId: 'a', siteIds: 'all' }))).toEqual([
      { path: '/siteIds', message: '/siteIds must be an array or "*"' },
    ]);
    expect(await detailsOf(await create({ clientId: 'a', siteIds: [1, 'x'] }))).toEqual([
      { path: '/siteIds/1', message: '/siteIds/1 must be integer' },
    ]);
    expect(await detailsOf(await create({ siteIds: [1] }))).toEqual([
      { path: '/clientId', message: '/clientId is required' },
    ]);
  });

  it('reports any bad dataType as exactly one detail listing the allowed values (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .string({ minLength: 1, maxLength: 12 })
          .filter((s) => !['basic', 'additional'].includes(s) && !s.includes('\u0000')),
        async (v) => {
          const res = await get(`/v1/sites?page=1&perPage=1&dataType=${encodeURIComponent(v)}`);
          const details = await detailsOf(res);
          expect(details).toEqual([
            {
              path: '/dataType',
              message: 'query parameter dataType must be one of: basic, additional',
            },
          ]);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('answers 415 for every body that is not JSON, on every route that takes one', async () => {
    const doc = (await get('/openapi.json')).json();
    const routes = Object.entries<any>(doc.paths).flatMap(([path, ops]) =>
      Object.entries<any>(ops)
        .filter(([, op]) => op.requestBody)
        .map(([method]) => [method.toUpperCase(), path.replace(/\{[^}]+\}/g, '1')]),
    );
    expect(routes.length).toBeGreaterThan(20);
    for (const [method, url] of routes)
      for (const type of [
        'text/plain',
        'application/xml',
        'application/x-www-form-urlencoded',
        'text/csv',
      ]) {
        const res = await ctx.app.inject({
          method: method as 'POST',
          url,
          headers: { ...bearer(admin), 'content-type': type },
          payload: 'a=1',
        });
        expect(res.statusCode, `${method} ${url} ${type}`).toBe(415);
        expect(res.json()).toEqual({
          statusCode: 415,
          error: 'Unsupported Media Type',
          message: 'unsupported content type; send application/json',
        });
      }
  });

  it('sends the rate-limit headers on every limited answer, unknown routes included; not on /health, /docs, /openapi.json', async () => {
    const limited = [
      await get('/v1/sites?page=1&perPage=1'),
      await get('/v1/sites?perPage=1'),
      await get('/v1/nope'),
      await get('/nope'),
      await get('/v1/sites', {}),
      await ctx.app.inject({
        method: 'POST',
        url: '/token',
        payload: { clientId: 'nobody', clientSecret: 'wrong-secret' },
      }),
    ];
    expect(limited.map((r) => r.statusCode)).toEqual([200, 400, 404, 404, 401, 401]);
    for (const res of limited)
      expect(res.headers['x-ratelimit-limit'], `${res.statusCode} ${res.body}`).toBeDefined();
    const [a, , c] = limited;
    expect(Number(c.headers['x-ratelimit-remaining'])).toBeLessThan(
      Number(a.headers['x-ratelimit-remaining']),
    ); // a 404 counts
    for (const url of ['/health', '/docs/', '/openapi.json'])
      expect((await get(url, {})).headers['x-ratelimit-limit'], url).toBeUndefined();
  });

  it('lists 500 for every telemetry upload route in the OpenAPI document', async () => {
    const doc = (await get('/openapi.json')).json();
    const uploads = Object.entries<any>(doc.paths).filter(([path]) =>
      /^\/v1\/edge\/(logs|readings)\//.test(path),
    );
    expect(uploads).toHaveLength(18);
    for (const [path, ops] of uploads)
      expect(Object.keys(ops.post.responses), path).toEqual(
        expect.arrayContaining(['201', '415', '500']),
      );
  });

  it('serves /docs with a Content-Security-Policy that works over plain HTTP, and tells how to get a token', async () => {
    for (const url of ['/docs', '/docs/', '/docs/static/swagger-ui-bundle.js']) {
      const page = await get(url, { host: '192.0.2.10:8080' });
      expect(page.statusCode, url).toBe(200);
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('upgrade-insecure-requests');
    }
    const { description } = (await get('/openapi.json')).json().info;
    expect(description).toContain('POST /token');
    expect(description).toContain('Authorize');
    expect(description).toContain('client rotate-secret demo');
  });

  it("names the product on /docs and in the document: package.json's name and version, and its licence", async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const { info } = (await get('/openapi.json')).json();
    expect(info.title).toBe(pkg.name);
    expect(info.version).toBe(pkg.version);
    expect(info.license).toEqual({
      name: pkg.license && pkg.license !== 'UNLICENSED' ? pkg.license : 'Proprietary',
    });
    const page = await get('/docs/', {});
    expect(page.body).toMatch(new RegExp(`<title>${pkg.name} ${pkg.version} API</title>`));
    // The top bar's logo (a data URL in the page's script) is the product's name and version.
    const script = (await get('/docs/static/swagger-initializer.js', {})).body;
    const data = /data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(script)?.[1];
    const logo = Buffer.from(data ?? '', 'base64').toString('utf8');
    expect(logo).toContain(`>${pkg.name}<`);
    expect(logo).toContain(`>${pkg.version}<`);
    expect(page.body).not.toContain('favicon-32x32.png');
  });
});
