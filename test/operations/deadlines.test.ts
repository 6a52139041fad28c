import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, startApp, type TestContext, describeWith } from '../helper.js';

// The embedded database runs one transaction at a time: while one is held open (a long import, a
// stuck request), every other call waits for it. Those waits are bounded like any database call:
// /health 503, reads 503 with retry-after, uploads 500 (each at its deadline), and all answer again
// once the transaction ends. (On PostgreSQL an open transaction blocks nobody; its
// failures are in outage.test.ts.)

const QUERY_TIMEOUT_MS = 1000;
const WRITE_TIMEOUT_MS = 1500;

describeWith(['pglite'], 'deadlines while the embedded database is held [pglite]', () => {
  let ctx: TestContext;
  let token: string;
  beforeAll(async () => {
    ctx = await startApp('pglite', {
      demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 },
      config: {
        QUERY_TIMEOUT_MS,
        WRITE_TIMEOUT_MS,
        CLIENT_CACHE_MS: 60_000,
        ROLLUP_REFRESH_MS: 0,
      },
    });
    token = await ctx.token();
  });
  afterAll(async () => ctx?.close());

  it('answers 503 (reads, /health) and 500 (uploads) at the deadlines, and recovers', async () => {
    let release!: () => void;
    let held!: () => void;
    const isHeld = new Promise<void>((r) => (held = r));
    const holding = ctx.db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      held();
      await new Promise<void>((r) => (release = r));
    });
    await isHeld;
    try {
      // Answered at all while the transaction is held: nothing else would end their waits (the
      // transaction is released only after they are answered), only their deadlines.
      const [health, sites, upload] = await Promise.all([
        ctx.app.inject({ method: 'GET', url: '/health' }),
        ctx.app.inject({
          method: 'GET',
          url: '/v1/sites?page=1&perPage=1',
          headers: bearer(token),
        }),
        ctx.app.inject({
          method: 'POST',
          url: '/v1/edge/logs/pump',
          headers: bearer(token),
          payload: { sitePumpID: 10401, running: true, timestamp: '2026-08-01T00:00:00Z' },
        }),
      ]);
      expect(health.statusCode).toBe(503);
      expect(sites.statusCode).toBe(503);
      expect(sites.headers['retry-after']).toMatch(/^\d+$/);
      expect(upload.statusCode).toBe(500);
      expect(upload.json()).toMatchObject({
        statusCode: 500,
        message: expect.stringContaining('send it again'),
      });
    } finally {
      release();
      await holding;
    }
    expect((await ctx.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    expect(
      (
        await ctx.app.inject({
          method: 'GET',
          url: '/v1/sites?page=1&perPage=1',
          headers: bearer(token),
        })
      ).statusCode,
    ).toBe(200);
  }, 30_000);
});
