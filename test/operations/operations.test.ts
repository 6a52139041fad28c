import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import {
  bearer,
  describeEachBackend,
  instrument,
  startApp,
  testSettings,
  type TestContext,
} from '../helper.js';

describeEachBackend('operations and errors', (backend) => {
  let ctx: TestContext;
  let token: string;
  const logs: string[] = [];
  beforeAll(async () => {
    const stream = new Writable({
      write: (chunk, _enc, done) => (logs.push(String(chunk)), done()),
    });
    ctx = await startApp(backend, {
      demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 },
      settings: { BODY_LIMIT: 2048 },
      logger: { level: 'info', stream },
    });
    token = await ctx.token('*', { clientId: 'ops', clientSecret: 'very-secret-value-42' });
  });
  afterAll(async () => ctx?.close());

  it('GET /health answers 200 without a token', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', database: backend });
  });

  it('GET /health answers 503 with the error body when the database does not answer', async () => {
    let down = false;
    const broken = instrument(ctx.db, (view) => ({
      query: (sql, params, options) =>
        down
          ? Promise.reject(new Error('connection refused at 10.1.2.3'))
          : view.query(sql, params, options),
    }));
    const sick = await buildApp(testSettings(), { db: broken, logger: false });
    down = true;
    const res = await sick.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'database unavailable',
    });
    await sick.close();
  });

  it('serves the OpenAPI document with every route, its schemas and statuses, and the docs page', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(ctx.app.routeTable()).toContainEqual({ url: '/v1/sites', methods: ['GET', 'HEAD'] });
    expect(doc.paths['/token'].post.responses).toHaveProperty('200');
    expect(doc.paths['/token'].post.responses).toHaveProperty('401');
    const sites = doc.paths['/v1/sites'].get;
    // 403: the role edge may not list sites.
    expect(Object.keys(sites.responses).sort()).toEqual(['200', '400', '401', '403', '429', '503']);
    expect(sites.description).toBe('Roles: full, viewer, operator.');
    expect(sites.security).toEqual([{ bearer: [] }]);
    expect(sites.parameters.map((p: any) => p.name).sort()).toEqual([
      'active',
      'companyId',
      'dataType',
      'name',
      'page',
      'perPage',
      'sortBy',
      'sortDirection',
    ]);
    expect(
      sites.parameters
        .filter((p: any) => p.required)
        .map((p: any) => p.name)
        .sort(),
    ).toEqual(['page', 'perPage']);
    // Every documented /v1 route names its statuses and the shared error body.
    for (const [path, ops] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(ops)) {
        expect(op.responses, `${method} ${path}`).toBeDefined();
        if (path.startsWith('/v1'))
          expect(Object.keys(op.responses), `${method} ${path}`).toEqual(
            expect.arrayContaining(['401', '429']),
          );
      }
    const page = await ctx.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
  });

  it('answers unknown routes with a 404 error body', async () => {
    for (const url of ['/nope', '/v1/nope', '/v2/sites']) {
      const res = await ctx.app.inject({ method: 'GET', url, headers: bearer(token) });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({
        statusCode: 404,
        error: 'Not Found',
        message: expect.stringContaining(url),
      });
    }
  });

  it('answers 413 above BODY_LIMIT and 415 for a body that is not JSON', async () => {
    const big = await ctx.app.inject({
      method: 'POST',
      url: '/token',
      payload: { clientId: 'ops', clientSecret: 'x'.repeat(4000) },
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ statusCode: 413, error: 'Payload Too Large' });
    const text = await ctx.app.inject({
      method: 'POST',
      url: '/token',
      payload: 'clientId=ops',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type' });
  });

  it('hides the cause of a 500 and never logs secrets or tokens', async () => {
    const app = await buildApp(testSettings(), { db: ctx.db, logger: false });
    app.get('/v1/explode', async () => {
      throw new Error('SELECT secret FROM clients -- at /src/internal.ts:12');
    });
    const t = (
      await app.inject({
        method: 'POST',
        url: '/token',
        payload: { clientId: 'ops', clientSecret: 'very-secret-value-42' },
      })
    ).json().accessToken;
    const res = await app.inject({ method: 'GET', url: '/v1/explode', headers: bearer(t) });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      statusCode: 500,
      error: 'Internal Server Error',
      message: 'internal server error',
    });
    await app.close();

    await ctx.app.inject({
      method: 'POST',
      url: '/token',
      payload: { clientId: 'ops', clientSecret: 'very-secret-value-42' },
    });
    await ctx.app.inject({
      method: 'GET',
      url: '/v1/sites?page=1&perPage=1',
      headers: bearer(token),
    });
    const text = logs.join('');
    expect(text).toContain('"statusCode":200'); // requests are logged, as JSON lines
    expect(text).not.toContain('very-secret-value-42');
    expect(text).not.toContain(token);
    for (const line of logs) expect(() => JSON.parse(line)).not.toThrow();
  });
});

describeEachBackend('NUL characters', (backend) => {
  let ctx: TestContext;
  let token: string;
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 } });
    token = await ctx.token('*');
  });
  afterAll(async () => ctx?.close());

  it('answers 400, not a database error, for a NUL in a query string or a JSON body', async () => {
    const q = await ctx.app.inject({
      method: 'GET',
      url: '/v1/sites?page=1&perPage=5&name=a%00b',
      headers: bearer(token),
    });
    expect(q.statusCode).toBe(400);
    expect(q.json()).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    const b = await ctx.app.inject({
      method: 'POST',
      url: '/v1/edge/logs/pump',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: '{"sitePumpID":10401,"timestamp":"2026-01-01T00:00:00Z","status":"run\\u0000ning"}',
    });
    expect(b.statusCode).toBe(400);
    expect(b.json().message).toContain('NUL');
    expect(b.json().details).toEqual([{ path: '/status', message: 'NUL is not allowed' }]);
    // An escaped backslash followed by "u0000" is ordinary text and is accepted.
    const ok = await ctx.app.inject({
      method: 'POST',
      url: '/v1/edge/logs/pump',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: '{"sitePumpID":10401,"timestamp":"2026-01-01T00:00:00Z","status":"a\\\\u0000b"}',
    });
    expect(ok.statusCode).toBe(201);
    const poisoned = await ctx.app.inject({
      method: 'POST',
      url: '/token',
      headers: { 'content-type': 'application/json' },
      payload: '{"clientId":"a","clientSecret":"b","__proto__":{"x":1}}',
    });
    expect(poisoned.statusCode).toBe(400);
  });
});
