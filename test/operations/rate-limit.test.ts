import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import {
  bearer,
  describeEachBackend,
  openTestDb,
  startApp,
  testSettings,
  type TestContext,
  describeWith,
  uniqueAddress,
} from '../helper.js';

const SITES = '/v1/sites?page=1&perPage=1';

describeEachBackend('rate limiting', (backend) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 },
      settings: { RATE_LIMIT_MAX: 5, RATE_LIMIT_WINDOW_MS: 60_000 },
    });
  });
  afterAll(async () => ctx?.close());

  it('counts per client, sends the headers, and answers 429 with retry-after and the error body', async () => {
    const a = await ctx.token('*', { clientId: 'rl-a' }); // POST /token counts against the IP, not the client
    const b = await ctx.token('*', { clientId: 'rl-b' });
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await ctx.app.inject({ method: 'GET', url: SITES, headers: bearer(a) });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('5');
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
      remaining.push(Number(res.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const limited = await ctx.app.inject({ method: 'GET', url: SITES, headers: bearer(a) });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json()).toMatchObject({
      statusCode: 429,
      error: 'Too Many Requests',
      message: expect.stringContaining('rate limit'),
    });
    // Another client is counted on its own.
    expect(
      (await ctx.app.inject({ method: 'GET', url: SITES, headers: bearer(b) })).statusCode,
    ).toBe(200);
  });

  it('limits POST /token per IP', async () => {
    const from = (ip: string) =>
      ctx.app.inject({
        method: 'POST',
        url: '/token',
        remoteAddress: ip,
        payload: { clientId: 'rl-a', clientSecret: 'wrong-secret' },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await from('10.9.9.9')).statusCode);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect((await from('10.9.9.10')).statusCode).toBe(401);
  });

  it('does not limit /health', async () => {
    for (let i = 0; i < 8; i++)
      expect((await ctx.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });
});

// Two instances with REDIS_URL count against one limit (CI sets TEST_REDIS_URL to the local Redis).
const redisUrl = process.env.TEST_REDIS_URL;
describeWith(['redis'], 'rate limiting shared through Redis', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb('pglite');
  });
  afterAll(async () => db?.close());

  it('shares one client counter between two instances', async () => {
    const clientId = `shared-${randomBytes(4).toString('hex')}`;
    await upsertClient(db, { clientId, clientSecret: 'secret-123456', siteIds: '*' });
    const config = testSettings({
      REDIS_URL: redisUrl,
      RATE_LIMIT_MAX: 6,
      RATE_LIMIT_WINDOW_MS: 60_000,
    });
    const [one, two] = await Promise.all([
      buildApp(config, { db, logger: false }),
      buildApp(config, { db, logger: false }),
    ]);
    try {
      // POST /token counts per IP, in the same Redis as every other run and suite on this machine
      // (files run in parallel): from an address of its own, so that it is not refused by their counts.
      const token = (
        await one.inject({
          method: 'POST',
          url: '/token',
          remoteAddress: uniqueAddress(),
          payload: { clientId, clientSecret: 'secret-123456' },
        })
      ).json().accessToken;
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push(
          (await one.inject({ method: 'GET', url: SITES, headers: bearer(token) })).statusCode,
        );
        statuses.push(
          (await two.inject({ method: 'GET', url: SITES, headers: bearer(token) })).statusCode,
        );
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
