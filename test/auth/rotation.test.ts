import { afterAll, expect, it, vi } from 'vitest';
import { createSigner } from 'fast-jwt';
import { buildApp, type FastifyTypebox } from '../../src/app.js';
import { adminSuite } from '../admin/fixture.js';
import { bearer, describeEachBackend, testSettings } from '../helper.js';

// Tokens carry `iat` in whole seconds. A token issued in the same second as its client's secret
// rotation or disable, before it, must stop working all the same; one issued right after it (the
// same second too) must work. Each case repeats until the token and the change fall in one second.

const claims = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
const second = () => Math.floor(Date.now() / 1000);
const ATTEMPTS = 30;

describeEachBackend('tokens issued before a rotation or a disable', (backend) => {
  const t = adminSuite(backend);
  const others: FastifyTypebox[] = [];
  afterAll(async () => {
    for (const app of others) await app.close();
  });

  /** The second of the client's last rotation, as the database holds it. */
  const retiredSecond = async (clientId: string) =>
    (
      await t.ctx.db.query<{ s: number | null }>(
        `SELECT floor(extract(epoch FROM tokens_not_before))::int AS s FROM clients WHERE client_id = $1`,
        [clientId],
      )
    )[0].s;
  const create = async (clientId: string) =>
    (await t.call(t.root, 'POST', '/clients', { clientId, siteIds: [1] })).body
      .clientSecret as string;

  it('refuses a token issued in the same second as the rotation, before it; the one issued right after works', async () => {
    let secret = await create('same-second');
    for (let attempt = 1; ; attempt++) {
      const start = second();
      const before = await t.login('same-second', secret);
      expect(before.status).toBe(200);
      const rotated = await t.call(t.root, 'POST', '/clients/same-second/secret');
      expect(rotated.status).toBe(200);
      secret = rotated.body.clientSecret;
      const after = await t.login('same-second', secret);
      expect(after.status).toBe(200);
      const rotation = await retiredSecond('same-second');
      if (
        second() === start &&
        claims(before.token).iat === rotation &&
        claims(after.token).iat === rotation
      ) {
        expect((await t.sites(before.token)).status).toBe(401);
        expect((await t.sites(after.token)).status).toBe(200);
        return;
      }
      expect(attempt, 'never issued a token and rotated in one second').toBeLessThan(ATTEMPTS);
    }
  });

  it('refuses, once the client is enabled again, a token issued before it was disabled, in the same second; a new one works', async () => {
    const secret = await create('off-on');
    for (let attempt = 1; ; attempt++) {
      const start = second();
      const before = await t.login('off-on', secret);
      expect(before.status).toBe(200);
      expect((await t.call(t.root, 'PATCH', '/clients/off-on', { disabled: true })).status).toBe(
        200,
      );
      expect((await t.sites(before.token)).status).toBe(401);
      expect((await t.call(t.root, 'PATCH', '/clients/off-on', { disabled: false })).status).toBe(
        200,
      );
      const after = await t.login('off-on', secret);
      expect(after.status).toBe(200);
      if (second() === start && claims(after.token).iat === claims(before.token).iat) {
        expect((await t.sites(before.token)).status).toBe(401);
        expect((await t.sites(after.token)).status).toBe(200);
        return;
      }
      expect(attempt, 'never issued, disabled and enabled in one second').toBeLessThan(ATTEMPTS);
    }
  });

  it('in another instance, stops a token issued before the rotation within CLIENT_CACHE_MS; the new one works at once', async () => {
    // A second instance on the same database, with a short client cache and no forgetClient from the first.
    const other = await buildApp(testSettings({ CLIENT_CACHE_MS: 500 }), {
      db: t.ctx.db,
      logger: false,
    });
    others.push(other);
    await other.ready();
    const sites = async (token: string) =>
      (
        await other.inject({
          method: 'GET',
          url: '/v1/sites?page=1&perPage=5',
          headers: bearer(token),
        })
      ).statusCode;
    const secret = await create('two-instances');
    const before = await t.login('two-instances', secret);
    expect(await sites(before.token)).toBe(200); // cached there now
    const rotated = await t.call(t.root, 'POST', '/clients/two-instances/secret');
    const after = await t.login('two-instances', rotated.body.clientSecret);
    expect(await sites(after.token)).toBe(200);
    const rotatedAt = Date.now();
    await vi.waitFor(async () => expect(await sites(before.token)).toBe(401), {
      timeout: 5000,
      interval: 50,
    });
    // The cache's own bound (500 ms), with room for a slow shared machine.
    expect(Date.now() - rotatedAt).toBeLessThan(3000);
    expect(await sites(after.token)).toBe(200);
  });

  it('handles tokens issued before this release (no rotation claim) by the second: the rotation second itself is refused', async () => {
    const secret = await create('legacy');
    expect((await t.login('legacy', secret)).status).toBe(200);
    expect((await t.call(t.root, 'POST', '/clients/legacy/secret')).status).toBe(200);
    const rotation = (await retiredSecond('legacy'))!;
    const sign = createSigner({ key: testSettings().JWT_SECRET! });
    const legacy = (iat: number) =>
      sign({ sub: 'legacy', jti: `j${iat}`, iat, exp: Math.floor(Date.now() / 1000) + 600 });
    expect((await t.sites(legacy(rotation - 1))).status).toBe(401);
    expect((await t.sites(legacy(rotation))).status).toBe(401);
    expect((await t.sites(legacy(rotation + 1))).status).toBe(200);
  });
});
