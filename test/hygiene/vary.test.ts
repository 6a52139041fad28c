import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { listen } from '../stream/fixtures.js';
import {
  requestFor,
  routeRequests,
  securedRoutes,
  siteOne,
  type RouteRequest,
} from './routes-fixture.js';

// Every answer chosen by the Accept header says so with Vary: accept, so that a cache between the
// service and its clients never hands one client's CSV to another that asked for JSON. Built from
// the app's route table: a route whose answer changes with Accept and lacks the header fails.

const ACCEPTS = ['application/json', 'text/csv', 'text/csv;q=0.9, application/json;q=0.5', '*/*'];

/** The routes known to negotiate (JSON or CSV by Accept), so that the generic check is not vacuous. */
const NEGOTIATING = [
  'POST /v1/transactions/logs/load',
  'POST /v1/sensors/logs/load',
  'POST /v1/meters/logs/load',
  'POST /v1/pumps/logs/load',
  'POST /v1/tanks/logs/load',
  'POST /v1/sensors/logs/raw',
  'POST /v1/sensors/logs/interpolated',
  'POST /v1/sensors/logs/plot',
  'POST /v1/alarms/kpis',
];

const varies = (vary: unknown) =>
  String(vary ?? '')
    .toLowerCase()
    .split(',')
    .some((v) => v.trim() === 'accept' || v.trim() === '*');

describeEachBackend('Vary: accept on every answer the Accept header chooses', (backend) => {
  let ctx: TestContext;
  let owner: string;
  let table: ReturnType<typeof routeRequests>;
  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 2, transactionsPerSite: 2, imagesPerSite: 2 },
      settings: { ROLLUP_REFRESH_MS: 0 },
    });
    owner = await ctx.token('*', { clientId: 'owner', admin: true, cameraIds: '*' });
    table = routeRequests(await siteOne(ctx, owner));
  });
  afterAll(async () => ctx?.close());

  const call = (r: RouteRequest, accept: string) =>
    ctx.app.inject({
      method: r.method,
      url: r.url,
      headers: { ...bearer(owner), accept },
      ...(r.body !== undefined ? { payload: r.body as object } : {}),
    });

  it('sends Vary: accept on every answer of a route whose status or media type follows Accept', async () => {
    const negotiating: string[] = [];
    let n = 0;
    for (const [method, url] of securedRoutes(ctx)) {
      const key = `${method} ${url}`;
      const answers = [];
      for (const accept of ACCEPTS) {
        const req = requestFor(table, method, url, n++)!;
        if (req.streams) continue;
        const res = await call(req, accept);
        expect(res.statusCode, `${key} (${accept}): ${res.body.slice(0, 200)}`).toBeLessThan(300);
        answers.push(res);
      }
      if (!answers.length) continue;
      const shapes = new Set(answers.map((r) => `${r.statusCode} ${r.headers['content-type']}`));
      if (shapes.size > 1) negotiating.push(key);
      for (const [i, res] of answers.entries())
        if (shapes.size > 1)
          expect(varies(res.headers.vary), `${key} (${ACCEPTS[i]}): vary ${res.headers.vary}`).toBe(
            true,
          );
    }
    expect(negotiating.sort()).toEqual([...NEGOTIATING].sort());
  });

  it('sends it on the transaction log download as JSON, as CSV and without Accept, not on the JSON-only change logs', async () => {
    const load = table['POST /v1/transactions/logs/load'](0);
    const body = {
      ...(load.body as object),
      start: '2025-01-01T00:00:00Z',
      end: '2026-01-01T00:00:00Z',
    };
    for (const accept of [undefined, 'application/json', 'text/csv']) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: load.url,
        headers: { ...bearer(owner), ...(accept ? { accept } : {}) },
        payload: body,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe(
        accept === 'text/csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
      );
      expect(res.headers.vary).toBe('accept');
    }
    const changes = await call(table['POST /v1/transactions/change-logs'](0), 'text/csv');
    expect(changes.statusCode).toBe(200);
    expect(changes.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(changes.headers.vary).toBeUndefined();
  });

  it('sends it on the live stream, as stream and as 406', async () => {
    const base = await listen(ctx.app);
    const refused = await fetch(`${base}/v1/stream?siteIds=1`, {
      headers: { ...bearer(owner), accept: 'application/json' },
    });
    expect(refused.status).toBe(406);
    expect(varies(refused.headers.get('vary'))).toBe(true);
    await refused.body?.cancel();
    const ac = new AbortController();
    const res = await fetch(`${base}/v1/stream?siteIds=1`, {
      headers: { ...bearer(owner), accept: 'text/event-stream' },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(varies(res.headers.get('vary'))).toBe(true);
    ac.abort();
  });

  it('images answer the same whatever Accept says (no negotiation, no Vary needed)', async () => {
    for (const key of ['GET /v1/images/tickets/:uuid', 'POST /v1/images/tickets']) {
      const req = table[key](0);
      const [a, b] = [await call(req, 'application/json'), await call(req, 'text/csv')];
      expect(a.statusCode).toBe(200);
      expect(b.statusCode).toBe(200);
      expect(a.headers['content-type']).toBe(b.headers['content-type']);
    }
  });
});
