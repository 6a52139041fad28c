import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSigner } from 'fast-jwt';
import { updateClient } from '../../src/auth/clients.js';
import {
  bearer,
  describeEachBackend,
  startApp,
  testSettings,
  type TestContext,
} from '../helper.js';

const SECRET = testSettings().JWT_SECRET!;
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const SITES = '/v1/sites?page=1&perPage=5';

describeEachBackend('POST /token and bearer tokens', (backend) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: { sites: 2, transactionsPerSite: 1, imagesPerSite: 0 } });
  });
  afterAll(async () => ctx?.close());
  const sites = (headers: Record<string, string> = {}) =>
    ctx.app.inject({ method: 'GET', url: SITES, headers });

  it('issues a JWT for good credentials (200, IssueTokenResponseDto)', async () => {
    const token = await ctx.token('*', { clientId: 'alpha', clientSecret: 'alpha-secret-1' });
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/token',
      payload: { clientId: 'alpha', clientSecret: 'alpha-secret-1' },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['accessToken', 'expiresIn', 'tokenType']);
    expect(body.tokenType).toBe('Bearer');
    expect(body.expiresIn).toBe(3600);
    const [header, payload] = body.accessToken
      .split('.')
      .slice(0, 2)
      .map((p: string) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header.alg).toBe('HS256');
    expect(payload.sub).toBe('alpha');
    expect(payload.exp - payload.iat).toBe(3600);
    expect(typeof payload.jti).toBe('string');
    expect((await sites(bearer(token))).statusCode).toBe(200);
  });

  it('answers 401 for an unknown client or a wrong secret, with the error body', async () => {
    for (const payload of [
      { clientId: 'alpha', clientSecret: 'wrong-secret' },
      { clientId: 'nobody', clientSecret: 'alpha-secret-1' },
    ]) {
      const res = await ctx.app.inject({ method: 'POST', url: '/token', payload });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ statusCode: 401, error: 'Unauthorized' });
      expect(res.body).not.toContain('alpha-secret-1');
    }
  });

  it('answers 400 for a malformed token request', async () => {
    const bad = [
      { payload: {} },
      { payload: { clientId: 'alpha' } },
      { payload: { clientId: 5, clientSecret: 'x' } },
      { payload: '{"clientId": "alpha", ', headers: { 'content-type': 'application/json' } },
    ];
    for (const b of bad) {
      const res = await ctx.app.inject({ method: 'POST', url: '/token', ...b });
      expect(res.statusCode, JSON.stringify(b)).toBe(400);
      expect(res.json().statusCode).toBe(400);
      expect(res.json().error).toBe('Bad Request');
    }
  });

  it('answers 401 on /v1 for missing, malformed, expired, forged, alg:none and other-algorithm tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    const sign = (alg: string, payload: object, key = SECRET) => {
      const head = b64({ alg, typ: 'JWT' });
      const body = b64(payload);
      const hash = alg === 'HS512' ? 'sha512' : 'sha256';
      return `${head}.${body}.${createHmac(hash, key).update(`${head}.${body}`).digest('base64url')}`;
    };
    const claims = { sub: 'alpha', iat: now, exp: now + 600, jti: 'x' };
    const cases: Record<string, Record<string, string>> = {
      missing: {},
      'not bearer': { authorization: 'Basic YWxwaGE6c2VjcmV0' },
      'not a jwt': bearer('not-a-token'),
      expired: bearer(
        createSigner({ key: SECRET, algorithm: 'HS256' })({
          sub: 'alpha',
          jti: 'x',
          iat: now - 7200,
          exp: now - 3600,
        }),
      ),
      'wrong signature': bearer(sign('HS256', claims, 'another-secret-of-enough-length!!')),
      'alg none': bearer(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`),
      'other algorithm': bearer(sign('HS512', claims)),
      'no such client': bearer(sign('HS256', { ...claims, sub: 'ghost' })),
    };
    expect((await sites(bearer(sign('HS256', claims)))).statusCode).toBe(200); // the forging helper itself is right
    for (const [name, headers] of Object.entries(cases)) {
      const res = await sites(headers);
      expect(res.statusCode, name).toBe(401);
      expect(res.json(), name).toEqual({
        statusCode: 401,
        error: 'Unauthorized',
        message: expect.any(String),
      });
    }
  });

  it('stops accepting the tokens of a client once it is disabled', async () => {
    const token = await ctx.token('*', { clientId: 'beta' });
    expect((await sites(bearer(token))).statusCode).toBe(200);
    expect(await updateClient(ctx.db, 'beta', { disabled: true })).toBeDefined();
    expect((await sites(bearer(token))).statusCode).toBe(401);
    const again = await ctx.app.inject({
      method: 'POST',
      url: '/token',
      payload: { clientId: 'beta', clientSecret: 'secret-123456' },
    });
    expect(again.statusCode).toBe(401);
  });

  it('stores only a salted slow hash of each secret', async () => {
    await ctx.token('*', { clientId: 'gamma', clientSecret: 'same-secret-99' });
    await ctx.token('*', { clientId: 'delta', clientSecret: 'same-secret-99' });
    const rows = await ctx.db.query<{ secret_hash: string }>(
      `SELECT secret_hash FROM clients WHERE client_id IN ('gamma', 'delta')`,
    );
    expect(rows).toHaveLength(2);
    for (const r of rows) {
      expect(r.secret_hash).toMatch(/^scrypt\$16384\$/);
      expect(r.secret_hash).not.toContain('same-secret-99');
    }
    expect(rows[0].secret_hash).not.toBe(rows[1].secret_hash);
  });
});
