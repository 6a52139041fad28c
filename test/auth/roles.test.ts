import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Access } from '../../src/auth/access.js';
import { findClient, updateClient, upsertClient } from '../../src/auth/clients.js';
import type { Role } from '../../src/auth/roles.js';
import { migrate } from '../../src/db/migrate.js';
import { checkBeforeBody, declareRights, requireAccess } from '../../src/plugins/auth.js';
import { importDocument, ImportError } from '../../src/provisioning/import.js';
import { bearer, describeEachBackend, openTestDb, startApp, type TestContext } from '../helper.js';
import { until } from '../wait.js';

// Roles on clients: how a route's right is declared and checked (a route that declares none is
// nobody's), GET /v1/me, a role set by the provisioning document, a change made by another instance
// reaching this one within CLIENT_CACHE_MS, and the migration that makes every existing client `full`.

describe('declared rights', () => {
  const app = Fastify();
  beforeAll(async () => {
    app.addHook('onRequest', async (request) => {
      const role = request.headers['x-role'] as Role;
      request.access = new Access({
        clientId: 'c',
        siteIds: null,
        cameraIds: null,
        admin: true,
        role,
        disabled: false,
      });
    });
    await app.register(async (scope) => {
      checkBeforeBody(scope, requireAccess);
      declareRights(scope);
      scope.get('/undeclared', async () => 'ok');
      scope.get('/uploads', { config: { right: 'upload' } }, async () => 'ok');
    });
    await app.ready();
  });
  afterAll(async () => app.close());

  it('refuses a route that declares no right to every role, full included', async () => {
    for (const role of ['full', 'viewer', 'operator', 'edge']) {
      const res = await app.inject({ url: '/undeclared', headers: { 'x-role': role } });
      expect(res.statusCode, role).toBe(403);
      expect(res.json().message).toBe('this route declares no right: no role may call it');
    }
  });

  it('lets through the roles that hold the declared right, and only those', async () => {
    const status = async (role: string) =>
      (await app.inject({ url: '/uploads', headers: { 'x-role': role } })).statusCode;
    expect(await status('full')).toBe(200);
    expect(await status('edge')).toBe(200);
    expect(await status('viewer')).toBe(403);
    expect(await status('operator')).toBe(403);
  });

  it('stops the app at start for a right that does not exist', async () => {
    const bad = Fastify();
    const start = async () => {
      await bad.register(async (scope) => {
        declareRights(scope);
        scope.get('/x', { config: { right: 'everything' as never } }, async () => 'ok');
      });
      await bad.ready();
    };
    await expect(start()).rejects.toThrow(/unknown right everything/);
    await bad.close().catch(() => {});
  });
});

describeEachBackend('client roles', (backend) => {
  let ctx: TestContext;
  const me = async (token: string) => {
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(token) });
    return { status: res.statusCode, body: res.json() };
  };
  beforeAll(async () => {
    ctx = await startApp(backend, {
      demo: { sites: 2, transactionsPerSite: 1, imagesPerSite: 0 },
      // As on an instance that did not make the change: a record is read again after 300 ms.
      settings: { CLIENT_CACHE_MS: 300 },
    });
  });
  afterAll(async () => ctx?.close());

  it('answers GET /v1/me with the client as it is: id, role, admin right, sites and cameras', async () => {
    const listed = await ctx.token([2, 1], {
      clientId: 'me-listed',
      cameraIds: [20701],
      role: 'operator',
    });
    expect(await me(listed)).toEqual({
      status: 200,
      body: {
        clientId: 'me-listed',
        role: 'operator',
        admin: false,
        siteIds: [2, 1],
        cameraIds: [20701],
      },
    });
    const all = await ctx.token('*', { clientId: 'me-all', admin: true, cameraIds: '*' });
    expect((await me(all)).body).toEqual({
      clientId: 'me-all',
      role: 'full',
      admin: true,
      siteIds: '*',
      cameraIds: '*',
    });
    for (const role of ['viewer', 'edge'] as const) {
      const token = await ctx.token([1], { clientId: `me-${role}`, role });
      expect((await me(token)).body).toMatchObject({ role, siteIds: [1], cameraIds: [] });
    }
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/me' })).statusCode).toBe(401);
  });

  it('applies a role changed elsewhere (another instance, the CLI) to existing tokens within CLIENT_CACHE_MS', async () => {
    const token = await ctx.token([1], { clientId: 'elsewhere', role: 'viewer' });
    const sites = async () =>
      (
        await ctx.app.inject({
          method: 'GET',
          url: '/v1/sites?page=1&perPage=5',
          headers: bearer(token),
        })
      ).statusCode;
    expect(await sites()).toBe(200);
    await updateClient(ctx.db, 'elsewhere', { role: 'edge' });
    await until(async () => (await sites()) === 403, 'the new role to apply');
    expect((await me(token)).body.role).toBe('edge');
    // The token was not retired: only what it may do changed.
    await updateClient(ctx.db, 'elsewhere', { role: 'viewer' });
    await until(async () => (await sites()) === 200, 'the role viewer again');
  });

  it('takes a role from the provisioning document (full when absent) and refuses an unknown one, naming it', async () => {
    await importDocument(ctx.db, {
      clients: [
        { clientId: 'doc-edge', clientSecret: 'secret-123456', siteIds: [1], role: 'edge' },
        { clientId: 'doc-plain', clientSecret: 'secret-123456', siteIds: [1] },
      ],
    });
    expect((await findClient(ctx.db, 'doc-edge'))?.role).toBe('edge');
    expect((await findClient(ctx.db, 'doc-plain'))?.role).toBe('full');
    // A document says what a client is: a role left out is full again.
    await importDocument(ctx.db, {
      clients: [{ clientId: 'doc-edge', clientSecret: 'secret-123456', siteIds: [1] }],
    });
    expect((await findClient(ctx.db, 'doc-edge'))?.role).toBe('full');
    const refused = importDocument(ctx.db, {
      clients: [
        {
          clientId: 'doc-bad',
          clientSecret: 'secret-123456',
          siteIds: [1],
          role: 'superuser' as never,
        },
      ],
    });
    await expect(refused).rejects.toBeInstanceOf(ImportError);
    await expect(refused).rejects.toThrow(/clients\[0\]\.role/);
    expect(await findClient(ctx.db, 'doc-bad')).toBeUndefined();
  });

  it('keeps a role the database refuses from ever being stored', async () => {
    await expect(
      upsertClient(ctx.db, {
        clientId: 'sneaky',
        clientSecret: 'secret-123456',
        siteIds: [1],
        role: 'root' as never,
      }),
    ).rejects.toThrow();
  });
});

describeEachBackend('migration 016: client roles', (backend) => {
  it('makes every existing client full', async () => {
    const db = await openTestDb(backend);
    try {
      // The database as it was before roles: no column, migration 016 not applied.
      await db.exec(`ALTER TABLE clients DROP COLUMN role;
        DELETE FROM schema_migrations WHERE version = 16`);
      await db.query(
        `INSERT INTO clients (client_id, secret_hash, site_ids, camera_ids, admin) VALUES
          ('old-admin', 'x', NULL, NULL, true), ('old-gateway', 'x', '{1}', '{}', false)`,
      );
      expect(await migrate(db)).toEqual(['016_client_roles.sql']);
      const rows = await db.query<{ id: string; role: string }>(
        `SELECT client_id AS id, role FROM clients ORDER BY 1`,
      );
      expect(rows).toEqual([
        { id: 'old-admin', role: 'full' },
        { id: 'old-gateway', role: 'full' },
      ]);
    } finally {
      await db.close();
    }
  });
});
