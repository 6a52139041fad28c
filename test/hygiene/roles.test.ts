import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Role } from '../../src/auth/roles.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import {
  fingerprint,
  requestFor,
  routeRequests,
  securedRoutes,
  siteOne,
  type RouteRequest,
} from './routes-fixture.js';

// The roles matrix, built from the app's own route table: for every route that needs a token and
// every role, 403 exactly where the role lacks the right, and a success where it has it. The
// expectation is the contract's list of what each role may do, written here apart from the
// service's own table (src/auth/roles.ts), so a route that declares no right, or the wrong one,
// fails; a route this list does not know fails the first test.

const ALL: Role[] = ['full', 'viewer', 'operator', 'edge'];
/** "viewer: reads only: sites, configuration, downloads, historian, stream, alarm lists, journal, KPIs, rules, transactions, images". */
const READERS: Role[] = ['full', 'viewer', 'operator'];

/** The roles that may call a route, as the contract words it; undefined for a route it does not name. */
function mayCall(url: string): Role[] | undefined {
  if (url === '/v1/me') return ALL;
  // Admin routes need the role full (and admin: true, which every client here has).
  if (url.startsWith('/v1/admin/')) return ['full'];
  // Configuration reads: a viewer's, and an edge's.
  if (url.startsWith('/v1/config/')) return ALL;
  // Uploads and alarm sends: edge.
  if (/^\/v1\/edge\/(logs|readings)\//.test(url)) return ['full', 'edge'];
  if (url === '/v1/edge/alarms' || url === '/v1/edge/alarms/batch') return ['full', 'edge'];
  // Resolve: an operator's and an edge's.
  if (url === '/v1/edge/alarms/resolve') return ['full', 'operator', 'edge'];
  // The active list: an alarm list (viewer) and the edge's.
  if (url === '/v1/edge/alarms/active') return ALL;
  // Acknowledge, shelve, unshelve: the operator's.
  if (/^\/v1\/alarms\/(acknowledge|shelve|unshelve)$/.test(url)) return ['full', 'operator'];
  // Alarm list, journal, KPIs, rules: reads.
  if (/^\/v1\/alarms\/(list|journal|kpis|rules)$/.test(url)) return READERS;
  if (
    url === '/v1/sites' ||
    url === '/v1/stream' ||
    /^\/v1\/(sensors|meters|pumps|tanks)\/logs\/[a-z]+$/.test(url) ||
    url.startsWith('/v1/transactions/') ||
    url.startsWith('/v1/images/')
  )
    return READERS;
  return undefined;
}

describeEachBackend('roles over every route', (backend) => {
  let ctx: TestContext;
  let table: ReturnType<typeof routeRequests>;
  const tokens = {} as Record<Role, string>;
  let n = 0;
  const call = (
    r: RouteRequest,
    token: string,
    method: RouteRequest['method'] | 'HEAD' = r.method,
  ) =>
    ctx.app.inject({
      method,
      url: r.url,
      headers: bearer(token),
      ...(r.body !== undefined && method !== 'HEAD' ? { payload: r.body as object } : {}),
    });
  const routes = () =>
    securedRoutes(ctx).map(([method, url]) => ({
      key: `${method} ${url}`,
      method,
      allowed: mayCall(url),
      req: () => requestFor(table, method, url, n++),
    }));

  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 2, transactionsPerSite: 2, imagesPerSite: 2 },
      settings: { ROLLUP_REFRESH_MS: 0 },
    });
    const owner = await ctx.token('*', { clientId: 'owner', admin: true, cameraIds: '*' });
    table = routeRequests(await siteOne(ctx, owner));
    // Alike in everything but the role: every site and camera, admin: true.
    for (const role of ALL)
      tokens[role] = await ctx.token('*', {
        clientId: `role-${role}`,
        admin: true,
        cameraIds: '*',
        role,
      });
  });
  afterAll(async () => ctx?.close());

  it('knows which roles may call every route that needs a token', () => {
    const all = routes();
    expect(all.length).toBeGreaterThanOrEqual(80);
    expect(all.filter((r) => !r.allowed).map((r) => r.key)).toEqual([]);
    // Each role lacks some route and has some other, so the test below proves both sides for each.
    for (const role of ALL.filter((r) => r !== 'full')) {
      expect(all.some((r) => r.allowed!.includes(role))).toBe(true);
      expect(all.some((r) => !r.allowed!.includes(role))).toBe(true);
    }
  });

  it('answers 403 exactly where the role lacks the right (HEAD too), storing nothing', async () => {
    const before = await fingerprint(ctx.db);
    let refused = 0;
    for (const route of routes())
      for (const role of ALL.filter((r) => !route.allowed!.includes(r))) {
        const res = await call(route.req()!, tokens[role]);
        expect(res.statusCode, `${route.key} as ${role}: ${res.body.slice(0, 300)}`).toBe(403);
        expect(res.json()).toEqual({
          statusCode: 403,
          error: 'Forbidden',
          message: expect.stringMatching(
            new RegExp(`^the role ${role} may not do this; it needs the role [a-z, ]+$`),
          ),
        });
        if (route.method === 'GET') {
          const head = await call(route.req()!, tokens[role], 'HEAD');
          expect(head.statusCode, `HEAD ${route.key} as ${role}`).toBe(403);
        }
        refused++;
      }
    expect(refused).toBeGreaterThan(60);
    expect(await fingerprint(ctx.db)).toEqual(before);
  });

  it('lets each role through where it has the right: a success, never a 403', async () => {
    for (const route of routes())
      for (const role of route.allowed!) {
        const req = route.req()!;
        if (req.streams) continue; // below: inject() cannot wait for a stream
        const res = await call(req, tokens[role]);
        expect(res.statusCode, `${route.key} as ${role}: ${res.body.slice(0, 300)}`).toBeLessThan(
          300,
        );
      }
  });

  it('opens the stream for the roles that read, and refuses it to the others', async () => {
    const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    for (const role of ALL) {
      const stop = new AbortController();
      const res = await fetch(`${base}/v1/stream?siteIds=1`, {
        headers: { ...bearer(tokens[role]), accept: 'text/event-stream' },
        signal: stop.signal,
      });
      expect(res.status, role).toBe(mayCall('/v1/stream')!.includes(role) ? 200 : 403);
      stop.abort();
      await res.body?.cancel().catch(() => {});
    }
  });
});
