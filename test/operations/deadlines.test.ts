import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { upsertClient } from '../../src/auth/clients.js';
import { withinDeadline } from '../../src/db/deadline.js';
import type { Database } from '../../src/db/index.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import {
  bearer,
  describeEachBackend,
  describeWith,
  instrument,
  openTestDb,
  startApp,
  testSettings,
  type TestContext,
} from '../helper.js';

// The embedded database runs one transaction at a time: while one is held open (a long import, a
// stuck request), every other call waits for it. Those waits are bounded like any database call:
// /health 503 within 2 s, reads 503 with retry-after, uploads 500 within WRITE_TIMEOUT_MS, and all
// answer again once the transaction ends. (On PostgreSQL an open transaction blocks nobody; its
// failures are in outage.test.ts.)

const QUERY_TIMEOUT_MS = 1000;
const WRITE_TIMEOUT_MS = 1500;

describeWith(['pglite'], 'deadlines while the embedded database is held [pglite]', () => {
  let ctx: TestContext;
  let token: string;
  beforeAll(async () => {
    ctx = await startApp('pglite', {
      demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 },
      settings: {
        QUERY_TIMEOUT_MS,
        WRITE_TIMEOUT_MS,
        CLIENT_CACHE_MS: 60_000,
        ROLLUP_REFRESH_MS: 0,
      },
    });
    token = await ctx.token();
  });
  afterAll(async () => ctx?.close());

  const timed = async <T>(run: () => Promise<T>) => {
    const started = Date.now();
    return { result: await run(), ms: Date.now() - started };
  };

  it('answers 503 (reads, /health) and 500 (uploads) within the deadlines, and recovers', async () => {
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
      const [health, sites, upload] = await Promise.all([
        timed(() => ctx.app.inject({ method: 'GET', url: '/health' })),
        timed(() =>
          ctx.app.inject({
            method: 'GET',
            url: '/v1/sites?page=1&perPage=1',
            headers: bearer(token),
          }),
        ),
        timed(() =>
          ctx.app.inject({
            method: 'POST',
            url: '/v1/edge/logs/pump',
            headers: bearer(token),
            payload: { sitePumpID: 10401, running: true, timestamp: '2026-08-01T00:00:00Z' },
          }),
        ),
      ]);
      expect(health.result.statusCode).toBe(503);
      expect(health.ms).toBeLessThan(2000);
      expect(sites.result.statusCode).toBe(503);
      expect(sites.result.headers['retry-after']).toMatch(/^\d+$/);
      expect(sites.ms).toBeLessThanOrEqual(QUERY_TIMEOUT_MS);
      expect(upload.result.statusCode).toBe(500);
      expect(upload.result.json()).toMatchObject({
        statusCode: 500,
        message: expect.stringContaining('send it again'),
      });
      expect(upload.ms).toBeLessThanOrEqual(WRITE_TIMEOUT_MS);
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

// A database that answers, but slowly: each call of a request fits its own deadline, their sum does
// not. A request's deadline runs from its arrival, not from each call's start: it is answered (503,
// uploads 500) within QUERY_TIMEOUT_MS (WRITE_TIMEOUT_MS) of arriving, its database work ended a
// little before so that the answer is out in time. Wall-clock bounds are what is tested here.
describeEachBackend(
  "a request's database calls, one after another, within its deadline",
  (backend) => {
    const QUERY_TIMEOUT_MS = 2000;
    const WRITE_TIMEOUT_MS = 3000;
    /** How long every call takes while the database is slow: less than either deadline, but two or three of them are more. */
    const SLOW_MS = 1200;
    const state = { slow: false };
    let db: Database;
    let app: FastifyTypebox;
    let token: string;
    beforeAll(async () => {
      db = await openTestDb(backend);
      await importDocument(
        db,
        generateDemo({ sites: 1, transactionsPerSite: 1, imagesPerSite: 0 }),
      );
      // The delay counts against each call's own deadline, as a slow server's would.
      const slow = instrument(db, (view, ms) => {
        const late = <T>(run: () => Promise<T>): Promise<T> =>
          state.slow
            ? withinDeadline(
                ms,
                async (expired) => {
                  await new Promise((r) => setTimeout(r, SLOW_MS));
                  if (expired()) throw new Error('too late');
                  return run();
                },
                () => true, // a server working on a slow statement
              )
            : run();
        return {
          query: (sql, params, options) => late(() => view.query(sql, params, options)),
          transaction: (fn) => late(() => view.transaction(fn)),
          snapshot: (fn) => late(() => view.snapshot(fn)),
        };
      });
      // No client or equipment cache: every request reads its client, every upload its equipment.
      app = await buildApp(
        testSettings({
          QUERY_TIMEOUT_MS,
          WRITE_TIMEOUT_MS,
          CLIENT_CACHE_MS: 0,
          EQUIPMENT_CACHE_MS: 0,
          ROLLUP_REFRESH_MS: 0,
        }),
        { db: slow, logger: false },
      );
      await upsertClient(db, { clientId: 'edge', clientSecret: 'secret-123456', siteIds: '*' });
      token = (
        await app.inject({
          method: 'POST',
          url: '/token',
          payload: { clientId: 'edge', clientSecret: 'secret-123456' },
        })
      ).json().accessToken;
    });
    afterAll(async () => {
      state.slow = false;
      await app?.close();
      await db?.close();
    });

    const timed = async (run: () => Promise<{ statusCode: number }>) => {
      const started = Date.now();
      const res = await run();
      return { status: res.statusCode, ms: Date.now() - started };
    };

    it('answers a read 503 within QUERY_TIMEOUT_MS and an upload 500 within WRITE_TIMEOUT_MS of its arrival; what fits is answered', async () => {
      state.slow = true;
      try {
        const [sites, upload, issued] = await Promise.all([
          // The client's record (one call), then the page of sites (another).
          timed(() =>
            app.inject({
              method: 'GET',
              url: '/v1/sites?page=1&perPage=5',
              headers: bearer(token),
            }),
          ),
          // The client's record, the equipment's site, then the write.
          timed(() =>
            app.inject({
              method: 'POST',
              url: '/v1/edge/logs/pump',
              headers: bearer(token),
              payload: { sitePumpID: 10401, running: true, timestamp: '2026-08-01T00:00:00Z' },
            }),
          ),
          // One call: it fits.
          timed(() =>
            app.inject({
              method: 'POST',
              url: '/token',
              payload: { clientId: 'edge', clientSecret: 'secret-123456' },
            }),
          ),
        ]);
        expect(sites.status).toBe(503);
        expect(sites.ms).toBeLessThanOrEqual(QUERY_TIMEOUT_MS);
        expect(upload.status).toBe(500);
        expect(upload.ms).toBeLessThanOrEqual(WRITE_TIMEOUT_MS);
        expect(issued.status).toBe(200);
        expect(issued.ms).toBeLessThanOrEqual(QUERY_TIMEOUT_MS);
      } finally {
        state.slow = false;
      }
      const again = await timed(() =>
        app.inject({ method: 'GET', url: '/v1/sites?page=1&perPage=5', headers: bearer(token) }),
      );
      expect(again.status).toBe(200);
    }, 30_000);

    it('says in its 503 that a read ran out of time, not that the database is unavailable', async () => {
      state.slow = true;
      try {
        const res = await app.inject({
          method: 'GET',
          url: '/v1/sites?page=1&perPage=5',
          headers: bearer(token),
        });
        expect(res.statusCode).toBe(503);
        expect(res.headers['retry-after']).toMatch(/^\d+$/);
        expect(res.json().message).toMatch(/did not finish in time.*shorter range/);
      } finally {
        state.slow = false;
      }
    }, 30_000);
  },
);
