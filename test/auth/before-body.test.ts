import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { createTokenService } from '../../src/auth/tokens.js';
import { upsertClient } from '../../src/auth/clients.js';
import type { Database } from '../../src/db/index.js';
import { openPostgres } from '../../src/db/postgres.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import {
  bearer,
  describeEachBackend,
  openTestDb,
  startApp,
  testSettings,
  describeWith,
} from '../helper.js';
import { until } from '../wait.js';

// A request without a valid token is refused before its body is read: whatever the body (huge,
// malformed, of another type), the answer is 401 and no parsing is done.

const UPLOAD = '/v1/edge/logs/sensor/batch';

describeEachBackend('authentication before the body', (backend) => {
  let db: Database;
  let app: FastifyTypebox;
  let token: string;
  let userToken: string;
  let viewerToken: string;
  const parsed = { n: 0 };
  beforeAll(async () => {
    db = await openTestDb(backend);
    await importDocument(db, generateDemo({ sites: 1, transactionsPerSite: 1, imagesPerSite: 0 }));
    app = await buildApp(testSettings(), { db, logger: false });
    // Counts every request whose body Fastify went on to read.
    app.addHook('preParsing', async (_request, _reply, payload) => {
      parsed.n++;
      return payload;
    });
    await app.ready();
    await upsertClient(db, {
      clientId: 'admin',
      clientSecret: 'secret-123456',
      siteIds: '*',
      admin: true,
    });
    await upsertClient(db, { clientId: 'user', clientSecret: 'secret-123456', siteIds: '*' });
    await upsertClient(db, {
      clientId: 'viewer',
      clientSecret: 'secret-123456',
      siteIds: '*',
      role: 'viewer',
    });
    const issue = async (clientId: string) =>
      (
        await app.inject({
          method: 'POST',
          url: '/token',
          payload: { clientId, clientSecret: 'secret-123456' },
        })
      ).json().accessToken;
    token = await issue('admin');
    userToken = await issue('user');
    viewerToken = await issue('viewer');
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const huge = (mib: number) =>
    `[${'{"sensorID":10101,"value":1,"timestamp":"2026-01-01T00:00:00Z"},'.repeat((mib * 1024 * 1024) / 64)}1]`;

  it('answers 401, not 400, 413 or 415, to a request without a token whatever its body, and parses none of them', async () => {
    parsed.n = 0;
    const cases = [
      {
        what: '11 MiB of JSON',
        headers: { 'content-type': 'application/json' },
        payload: huge(11),
      },
      {
        what: 'over the body limit',
        headers: { 'content-type': 'application/json' },
        payload: huge(17),
      },
      {
        what: 'malformed JSON',
        headers: { 'content-type': 'application/json' },
        payload: '[{"sensorID": 10101,',
      },
      {
        what: 'a wrong content type',
        headers: { 'content-type': 'application/xml' },
        payload: '<logs/>',
      },
      {
        what: 'a malformed token',
        headers: { 'content-type': 'application/json', authorization: 'Bearer not.a.token' },
        payload: '{',
      },
    ];
    for (const c of cases) {
      const res = await app.inject({
        method: 'POST',
        url: UPLOAD,
        headers: c.headers,
        payload: c.payload,
      });
      expect(res.statusCode, c.what).toBe(401);
      expect(res.json(), c.what).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      // Still counted by the rate limit (per IP), which runs before the check.
      expect(res.headers['x-ratelimit-limit'], c.what).toBeDefined();
    }
    expect(parsed.n).toBe(0);
    // With a token the same malformed body is read, parsed and refused.
    const res = await app.inject({
      method: 'POST',
      url: UPLOAD,
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: '[{',
    });
    expect(res.statusCode).toBe(400);
    expect(parsed.n).toBe(1);
  });

  it('answers 403 to a client that is not an admin before reading an admin body', async () => {
    parsed.n = 0;
    const res = await app.inject({
      method: 'POST',
      url: '/v1/admin/import',
      headers: { ...bearer(userToken), 'content-type': 'application/json' },
      payload: '{"sites": [',
    });
    expect(res.statusCode).toBe(403);
    expect(parsed.n).toBe(0);
  });

  it('answers 403 to a client whose role lacks the right before reading its body', async () => {
    parsed.n = 0;
    const res = await app.inject({
      method: 'POST',
      url: UPLOAD,
      headers: { ...bearer(viewerToken), 'content-type': 'application/json' },
      payload: huge(11),
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toMatch(/^the role viewer may not do this/);
    expect(parsed.n).toBe(0);
  });

  it('answers 401 at once to a request that announces a body and never sends it', async () => {
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = new URL(address);
    const socket = connect(Number(port), '127.0.0.1');
    // Answered at all: the body never comes, and a server waiting for it would answer only at the
    // request timeout (300 s by default), long past this test's.
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      socket.on('data', (d) => {
        text += d.toString();
        if (text.includes('\r\n\r\n')) resolve(text);
      });
      socket.on('error', reject);
      socket.write(
        `POST ${UPLOAD} HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 10000000\r\n\r\n`,
      );
    });
    socket.destroy();
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
  }, 30_000);

  it('answers 401, not 500, to a validly signed token whose subject holds a NUL or is too long', async () => {
    const tokens = createTokenService(testSettings().JWT_SECRET!, 3600);
    for (const sub of ['admin\u0000', 'a'.repeat(5000), '\ud800x']) {
      const res = await app.inject({
        method: 'GET',
        url: '/v1/sites?page=1&perPage=1',
        headers: bearer(tokens.issue(sub).accessToken),
      });
      expect(res.statusCode, JSON.stringify(sub)).toBe(401);
    }
  });
});

// PGlite is one connection in this process: a lock held by another session cannot happen there.
const CACHE_MS = 50;
describeWith(['postgres'], 'client lookups while the clients table is locked [postgres]', () => {
  it('serves clients it has verified recently, and answers 503 at the deadline for one it does not know', async () => {
    const ctx = await startApp('postgres', {
      demo: { sites: 1, transactionsPerSite: 1, imagesPerSite: 0 },
      settings: { CLIENT_CACHE_MS: CACHE_MS, QUERY_TIMEOUT_MS: 3000 },
    });
    const [{ schema }] = await ctx.db.query<{ schema: string }>(
      'SELECT current_schema() AS schema',
    );
    const other = await openPostgres(process.env.TEST_DATABASE_URL!, { schema, max: 1 });
    let unlock!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    try {
      const known = await ctx.token('*', { clientId: 'known' });
      await upsertClient(ctx.db, {
        clientId: 'unseen',
        clientSecret: 'secret-123456',
        siteIds: '*',
      });
      const unseen = createTokenService(testSettings().JWT_SECRET!, 3600).issue(
        'unseen',
      ).accessToken;
      const sites = (t: string) =>
        ctx.app.inject({ method: 'GET', url: '/v1/sites?page=1&perPage=1', headers: bearer(t) });
      expect((await sites(known)).statusCode).toBe(200);
      const cachedBy = Date.now();
      const holding = other.transaction(async (tx) => {
        await tx.query('LOCK TABLE clients IN ACCESS EXCLUSIVE MODE');
        locked();
        await new Promise<void>((r) => (unlock = r));
      });
      await isLocked;
      // The cached record is now due to be read again (CLIENT_CACHE_MS after it was read).
      await until(() => Date.now() > cachedBy + CACHE_MS, 'the cached record to be due');
      // A client it does not know: its lookup waits for the lock until its deadline (QUERY_TIMEOUT_MS).
      let refusedYet = false;
      const refusing = sites(unseen).finally(() => (refusedYet = true));
      for (let i = 0; i < 3; i++) {
        expect((await sites(known)).statusCode).toBe(200);
        // Served from the cache after a short wait for its own lookup (behind the lock too), not
        // at a lookup's deadline: the unknown client's lookup, begun before, is still waiting for its.
        expect(refusedYet).toBe(false);
      }
      const refused = await refusing;
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBeDefined();
      unlock();
      await holding;
      expect((await sites(unseen)).statusCode).toBe(200);
    } finally {
      unlock?.();
      await other.close();
      await ctx.close();
    }
  }, 30_000);
});
