import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { SettingsError, loadSettings } from '../../src/settings.js';
import type { Database } from '../../src/db/index.js';
import { openTestDb, testSettings } from '../helper.js';

// Behind a load balancer every client arrives from the balancer's address. With TRUST_PROXY naming
// the balancer, the per-IP limit (POST /token, requests without a token) counts each client by its
// X-Forwarded-For address; from any other peer the header is ignored, so nobody can pick a fresh
// address per request to escape the limit.

const BALANCER = '127.0.0.1';

describe('TRUST_PROXY: the client address behind a load balancer', () => {
  let db: Database;
  const apps: FastifyTypebox[] = [];
  beforeAll(async () => {
    db = await openTestDb('pglite');
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await db?.close();
  });

  const build = async (trust: string | undefined) => {
    const app = await buildApp(
      testSettings({ RATE_LIMIT_MAX: 2, RATE_LIMIT_WINDOW_MS: 60_000, TRUST_PROXY: trust }),
      { db },
    );
    apps.push(app);
    return app;
  };
  /** Statuses of n failed sign-ins from `peer`, each claiming to be `client` (X-Forwarded-For). */
  const signIns = async (app: FastifyTypebox, peer: string, client: string, n: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++)
      statuses.push(
        (
          await app.inject({
            method: 'POST',
            url: '/token',
            remoteAddress: peer,
            headers: { 'x-forwarded-for': client },
            payload: { clientId: 'nobody', clientSecret: 'wrong-secret' },
          })
        ).statusCode,
      );
    return statuses;
  };

  it('counts each forwarded address on its own when the peer is a trusted balancer', async () => {
    const app = await build(BALANCER);
    expect(await signIns(app, BALANCER, '203.0.113.1', 3)).toEqual([401, 401, 429]);
    expect(await signIns(app, BALANCER, '203.0.113.2', 2)).toEqual([401, 401]);
    // A hop count trusts that many proxies in front, whatever their address.
    const hops = await build('1');
    expect(await signIns(hops, '198.51.100.9', '203.0.113.7', 3)).toEqual([401, 401, 429]);
    expect(await signIns(hops, '198.51.100.9', '203.0.113.8', 1)).toEqual([401]);
  });

  it('ignores X-Forwarded-For from a peer it does not trust, and when unset', async () => {
    const trusting = await build(BALANCER);
    expect(await signIns(trusting, '198.51.100.7', '203.0.113.3', 2)).toEqual([401, 401]);
    expect(await signIns(trusting, '198.51.100.7', '203.0.113.4', 1)).toEqual([429]);
    const plain = await build(undefined);
    expect(await signIns(plain, BALANCER, '203.0.113.5', 2)).toEqual([401, 401]);
    expect(await signIns(plain, BALANCER, '203.0.113.6', 1)).toEqual([429]);
  });

  it('refuses a setting that is neither true, a hop count nor addresses', () => {
    for (const bad of ['yes please', 'false', '10.0.0.1;rm'])
      expect(() => loadSettings({ TRUST_PROXY: bad })).toThrow(SettingsError);
    for (const good of ['true', '1', '127.0.0.1', '127.0.0.1, 10.0.0.0/8', '::1'])
      expect(loadSettings({ TRUST_PROXY: good }).TRUST_PROXY).toBe(good);
  });
});
