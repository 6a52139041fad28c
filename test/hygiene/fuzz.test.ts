import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { SENSOR } from '../telemetry/fixtures.js';
import { BAD_TIMES, CONTENT_TYPES, mutatedBody, rawQueryValue, setAt } from './fuzz-inputs.js';
import {
  requestFor,
  routeRequests,
  securedRoutes,
  siteOne,
  type RouteRequest,
} from './routes-fixture.js';

// Fuzzing every route that takes a body and every query string, from the app's route table:
// whatever arrives, the answer is a success or a 4xx with the error body, never a 5xx, never a hang,
// and afterwards the service still answers. FUZZ_RUNS sets the cases of the main property (default
// 1500 on PGlite, a fifth of it on PostgreSQL); `npm run fuzz` runs many more.

const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);
const REQUEST_TIMEOUT_MS = 10_000;
const TIME_FIELDS = new Set(['timestamp', 'start', 'end', 'startTimestamp']);

interface Case {
  key: string;
  method: string;
  url: string;
  payload?: string | Buffer;
  headers: Record<string, string>;
}

describeEachBackend('fuzzing every route', (backend) => {
  const runs = (n: number) =>
    Math.max(20, Math.round((backend === 'postgres' ? n / 5 : n) * (RUNS / 1500)));
  let ctx: TestContext;
  let token: string;
  let bodyRoutes: { key: string; req: RouteRequest }[];
  let queryRoutes: { key: string; req: RouteRequest }[];
  const seen = { cases: 0, ok: 0, clientErrors: 0 };

  async function send(c: Case) {
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms: ${c.method} ${c.url.slice(0, 200)}`),
          ),
        REQUEST_TIMEOUT_MS,
      );
    });
    try {
      return await Promise.race([
        ctx.app.inject({
          method: c.method as 'POST',
          url: c.url,
          headers: c.headers,
          ...(c.payload !== undefined ? { payload: c.payload } : {}),
        }),
        hang,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The one rule: a success, or a 4xx with the error body; never a 5xx. */
  async function expectHandled(c: Case, exactly?: number) {
    seen.cases++;
    const res = await send(c);
    const where = `${c.key} ${c.url.slice(0, 120)} ${String(c.payload ?? '').slice(0, 200)} [${c.headers['content-type']}]`;
    if (exactly) expect(res.statusCode, `${where}: ${res.body.slice(0, 300)}`).toBe(exactly);
    expect(res.statusCode, `${where}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
    if (res.statusCode >= 400) {
      seen.clientErrors++;
      const body = res.json();
      expect(body, where).toMatchObject({
        statusCode: res.statusCode,
        error: expect.any(String),
        message: expect.any(String),
      });
    } else seen.ok++;
  }

  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 2, transactionsPerSite: 2, imagesPerSite: 1 },
      settings: { ROLLUP_REFRESH_MS: 0 },
    });
    token = await ctx.token('*', { clientId: 'fuzzer', admin: true, cameraIds: '*' });
    const table = routeRequests(await siteOne(ctx, token));
    const all = securedRoutes(ctx).map(([method, url], n) => ({
      key: `${method} ${url}`,
      req: requestFor(table, method, url, n)!,
    }));
    bodyRoutes = all.filter((r) => r.req.method !== 'GET');
    bodyRoutes.push({
      key: 'POST /token',
      req: {
        method: 'POST',
        url: '/token',
        body: { clientId: 'fuzzer', clientSecret: 'secret-123456' },
      },
    });
    // A stream that is accepted never ends, so its query is fuzzed by test/stream's own checks instead.
    queryRoutes = all.filter((r) => r.req.method === 'GET' && !r.req.streams);
  });
  afterAll(async () => ctx?.close());

  it('answers every mutated body with a success or a 4xx with the error body', async () => {
    const arb = fc.constantFrom(...bodyRoutes).chain(({ key, req }) =>
      fc
        .record({
          text: mutatedBody(req.body ?? {}),
          type: fc.constantFrom(...CONTENT_TYPES, 'application/json', 'application/json'),
          gzip: fc.boolean(),
        })
        .map(({ text, type, gzip }): Case => {
          const headers: Record<string, string> = {
            ...bearer(token),
            ...(type ? { 'content-type': type } : {}),
          };
          if (gzip) headers['content-encoding'] = 'gzip';
          return {
            key,
            method: req.method,
            url: req.url,
            headers,
            payload: gzip ? gzipSync(text) : text,
          };
        }),
    );
    await fc.assert(
      fc.asyncProperty(arb, (c) => expectHandled(c)),
      { numRuns: runs(1500) },
    );
  }, 600_000);

  it('answers 400 to hour 24, second 60, February 30 or a date alone in any time field', async () => {
    const withTime = bodyRoutes.flatMap(({ key, req }) =>
      timePaths(req.body).map((path) => ({ key, req, path })),
    );
    expect(withTime.length).toBeGreaterThan(20);
    const arb = fc
      .tuple(fc.constantFrom(...withTime), fc.constantFrom(...BAD_TIMES.slice(0, 5)))
      .map(([{ key, req, path }, bad]): Case => ({
        key,
        method: req.method,
        url: req.url,
        headers: { ...bearer(token), 'content-type': 'application/json' },
        payload: JSON.stringify(setAt(req.body, path, bad)),
      }));
    await fc.assert(
      fc.asyncProperty(arb, (c) => expectHandled(c, 400)),
      { numRuns: runs(300) },
    );
    for (const bad of BAD_TIMES.slice(0, 5))
      await expectHandled(
        {
          key: 'startDate',
          method: 'GET',
          url: `/v1/config/updates/site?siteId=1&startDate=${encodeURIComponent(bad)}`,
          headers: bearer(token),
        },
        400,
      );
  }, 600_000);

  it('answers every mutated query string and path with a success or a 4xx with the error body', async () => {
    const arb = fc.constantFrom(...queryRoutes).chain(({ key, req }) => {
      const [path, query = ''] = req.url.split('?');
      const params = query ? query.split('&').map((p) => p.split('=') as [string, string]) : [];
      const segments = path.split('/');
      return fc
        .oneof(
          // A parameter's value replaced, a parameter added (maybe twice), or one left out.
          fc
            .tuple(fc.nat(Math.max(0, params.length - 1)), rawQueryValue)
            .map(([i, v]) => params.map(([k, x], j) => `${k}=${j === i ? v : x}`).join('&')),
          fc
            .tuple(
              fc.constantFrom(
                'page',
                'perPage',
                'siteId',
                'startDate',
                'dataType',
                'sortBy',
                'name',
                'active',
                'companyId',
                '__proto__',
                'constructor',
              ),
              rawQueryValue,
              fc.boolean(),
            )
            .map(([k, v, twice]) =>
              [
                ...params.map(([a, b]) => `${a}=${b}`),
                `${k}=${v}`,
                ...(twice ? [`${k}=${v}`] : []),
              ].join('&'),
            ),
          fc.nat(Math.max(0, params.length - 1)).map((i) =>
            params
              .filter((_, j) => j !== i)
              .map(([k, x]) => `${k}=${x}`)
              .join('&'),
          ),
        )
        .chain((q) =>
          fc
            .tuple(fc.boolean(), fc.nat(segments.length - 1), rawQueryValue)
            .map(([pathToo, i, v]): Case => {
              const p =
                pathToo && i > 2 ? segments.map((s, j) => (j === i ? v : s)).join('/') : path;
              return { key, method: 'GET', url: `${p}?${q}`, headers: bearer(token) };
            }),
        );
    });
    await fc.assert(
      fc.asyncProperty(arb, (c) => expectHandled(c)),
      { numRuns: runs(1000) },
    );
  }, 600_000);

  it('still answers /health and a normal upload afterwards', async () => {
    expect(seen.cases).toBeGreaterThan(runs(1500));
    // Both kinds of answer were reached: the mutations are not all refused at the door.
    expect(seen.ok).toBeGreaterThan(0);
    expect(seen.clientErrors).toBeGreaterThan(0);
    expect((await ctx.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const up = await ctx.app.inject({
      method: 'POST',
      url: '/v1/edge/logs/sensor',
      headers: bearer(token),
      payload: { sensorID: SENSOR, value: 1, timestamp: new Date().toISOString() },
    });
    expect(up.statusCode, up.body).toBe(201);
  });
});

/** Paths of the time fields in a body. */
function timePaths(v: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(v)) return v.flatMap((x, i) => timePaths(x, [...at, i]));
  if (v && typeof v === 'object')
    return Object.entries(v).flatMap(([k, x]) =>
      TIME_FIELDS.has(k) && typeof x === 'string' ? [[...at, k]] : timePaths(x, [...at, k]),
    );
  return [];
}
