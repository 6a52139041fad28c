import { Writable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import type { Settings } from '../../src/settings.js';
import { bearer, startApp, type Backend, type TestContext } from '../helper.js';

// Three demo sites (1, 2, 3; cameras s*10000+701 and +702), and three clients: `root` (admin of
// everything), `limited` (admin of sites 1 and 2 and cameras 10701 and 20701) and `plain` (no admin).

export const CAM = { s1: 10701, s1b: 10702, s2: 20701, s3: 30701 };

export function adminSuite(backend: Backend, settings: Partial<Settings> = {}) {
  const logs: string[] = [];
  const t = {
    ctx: undefined as unknown as TestContext,
    root: '',
    limited: '',
    plain: '',
    logs,
    async call(
      token: string | undefined,
      method: 'GET' | 'POST' | 'PATCH',
      url: string,
      payload?: unknown,
      headers: Record<string, string> = {},
    ) {
      const res = await t.ctx.app.inject({
        method,
        url: `/v1/admin${url}`,
        payload: payload as any,
        headers: { ...(token ? bearer(token) : {}), ...headers },
      });
      return { status: res.statusCode, body: res.body ? res.json() : undefined };
    },
    /** A token for clientId/secret through POST /token: its status, and the token when 200. */
    async login(clientId: string, clientSecret: string) {
      const res = await t.ctx.app.inject({
        method: 'POST',
        url: '/token',
        payload: { clientId, clientSecret },
      });
      return {
        status: res.statusCode,
        token: res.statusCode === 200 ? (res.json().accessToken as string) : '',
      };
    },
    async sites(token: string) {
      const res = await t.ctx.app.inject({
        method: 'GET',
        url: '/v1/sites?page=1&perPage=50',
        headers: bearer(token),
      });
      return {
        status: res.statusCode,
        ids: res.statusCode === 200 ? res.json().data.map((s: { SiteID: number }) => s.SiteID) : [],
      };
    },
  };
  beforeAll(async () => {
    const stream = new Writable({
      write: (chunk, _enc, done) => (logs.push(String(chunk)), done()),
    });
    t.ctx = await startApp(backend, {
      demo: { sites: 3, transactionsPerSite: 1, imagesPerSite: 0 },
      logger: { level: 'info', stream },
      // A long client cache: changes must reach this process at once all the same (forgetClient).
      settings: { CLIENT_CACHE_MS: 60_000, ...settings },
    });
    t.root = await t.ctx.token('*', { clientId: 'root', admin: true, cameraIds: '*' });
    t.limited = await t.ctx.token([1, 2], {
      clientId: 'limited',
      admin: true,
      cameraIds: [CAM.s1, CAM.s2],
    });
    t.plain = await t.ctx.token('*', { clientId: 'plain', cameraIds: '*' });
  });
  afterAll(async () => t.ctx?.close());
  return t;
}
