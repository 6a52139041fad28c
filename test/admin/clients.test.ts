import { expect, it } from 'vitest';
import { bearer, describeEachBackend } from '../helper.js';
import { adminSuite, CAM } from './fixture.js';

describeEachBackend('admin API: clients', (backend) => {
  const t = adminSuite(backend);

  it('answers 401 without a token and 403 to a client without admin rights, on every admin route', async () => {
    const routes = [
      ['GET', '/clients'],
      ['POST', '/clients'],
      ['PATCH', '/clients/plain'],
      ['POST', '/clients/plain/secret'],
      ['POST', '/import'],
    ] as const;
    for (const [method, url] of routes) {
      const body = method === 'GET' ? undefined : { nonsense: true };
      expect((await t.call(undefined, method, url, body)).status, `${method} ${url}`).toBe(401);
      const res = await t.call(t.plain, method, url, body);
      expect(res.status, `${method} ${url}`).toBe(403);
      expect(res.body).toEqual({
        statusCode: 403,
        error: 'Forbidden',
        message: 'administration needs a client with admin rights',
      });
    }
  });

  it('creates a client: 201, a generated secret shown once that works, never a stored secret or hash anywhere', async () => {
    const res = await t.call(t.root, 'POST', '/clients', {
      clientId: 'gateway-1',
      siteIds: [1],
      cameraIds: [CAM.s1],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      clientId: 'gateway-1',
      siteIds: [1],
      cameraIds: [CAM.s1],
      admin: false,
      disabled: false,
    });
    expect(res.body.createdAt).toMatch(/Z$/);
    const secret = res.body.clientSecret as string;
    expect(secret).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const login = await t.login('gateway-1', secret);
    expect(login.status).toBe(200);
    expect(await t.sites(login.token)).toEqual({ status: 200, ids: [1] });

    const given = await t.call(t.root, 'POST', '/clients', {
      clientId: 'gateway-2',
      clientSecret: 'my-own-secret',
      siteIds: '*',
    });
    expect(given.status).toBe(201);
    expect(given.body).not.toHaveProperty('clientSecret');
    expect(given.body.cameraIds).toEqual([]);
    const list = await t.call(t.root, 'GET', '/clients');
    const text = JSON.stringify(list.body);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('my-own-secret');
    expect(text).not.toMatch(/scrypt|secret/i);
  });

  it('refuses an existing id (409, nothing changed), unknown sites or cameras (400), a bad id or secret (400) and a body that is not JSON (415)', async () => {
    await t.call(t.root, 'POST', '/clients', {
      clientId: 'taken',
      clientSecret: 'first-secret',
      siteIds: [1],
    });
    const again = await t.call(t.root, 'POST', '/clients', {
      clientId: 'taken',
      clientSecret: 'second-secret',
      siteIds: '*',
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      statusCode: 409,
      error: 'Conflict',
      message: expect.stringContaining('taken already exists'),
    });
    expect((await t.login('taken', 'first-secret')).status).toBe(200);
    expect((await t.login('taken', 'second-secret')).status).toBe(401);

    const unknownSite = await t.call(t.root, 'POST', '/clients', {
      clientId: 'nowhere',
      siteIds: [1, 99, 98],
    });
    expect(unknownSite.status).toBe(400);
    expect(unknownSite.body).toMatchObject({
      message: 'unknown sites 99, 98',
      details: [{ path: '/siteIds', message: 'no such site' }],
    });
    const many = await t.call(t.root, 'POST', '/clients', {
      clientId: 'nowhere',
      siteIds: [91, 92, 93, 94, 95, 96, 97],
    });
    expect(many.body.message).toBe('unknown sites 91, 92, 93, 94, 95 and 2 more');
    const unknownCamera = await t.call(t.root, 'POST', '/clients', {
      clientId: 'nowhere',
      siteIds: [1],
      cameraIds: [4242],
    });
    expect(unknownCamera).toMatchObject({ status: 400, body: { message: 'unknown camera 4242' } });
    for (const body of [
      { clientId: 'has space', siteIds: [1] },
      { clientId: 'short', clientSecret: 'short', siteIds: [1] },
      { clientId: 'noSites' },
      { clientId: 'badSites', siteIds: 'all' },
    ])
      expect((await t.call(t.root, 'POST', '/clients', body)).status, JSON.stringify(body)).toBe(
        400,
      );
    expect(
      (await t.call(t.root, 'GET', '/clients?page=1&perPage=1')).body.data.map(
        (c: any) => c.clientId,
      ),
    ).toEqual(['gateway-1']);

    const text = await t.call(t.root, 'POST', '/clients', 'clientId=x', {
      'content-type': 'text/plain',
    });
    expect(text.status).toBe(415);
  });

  it('lists clients a page at a time; a site-limited admin sees only clients within its own sites and cameras', async () => {
    for (const [clientId, siteIds, cameraIds] of [
      ['in-1', [1], []],
      ['in-12', [1, 2], [CAM.s2]],
      ['out-3', [3], []],
      ['out-star', '*', []],
      ['out-cam', [1], '*'],
      ['out-cam2', [1], [CAM.s1b]],
    ] as const)
      expect(
        (await t.call(t.root, 'POST', '/clients', { clientId, siteIds, cameraIds })).status,
      ).toBe(201);
    const all = await t.call(t.root, 'GET', '/clients?perPage=500');
    const ids = all.body.data.map((c: any) => c.clientId);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(
      expect.arrayContaining([
        'in-1',
        'in-12',
        'out-3',
        'out-star',
        'out-cam',
        'limited',
        'plain',
        'root',
      ]),
    );
    const page2 = await t.call(t.root, 'GET', '/clients?page=2&perPage=2');
    expect(page2.body).toMatchObject({
      page: 2,
      perPage: 2,
      total: all.body.total,
      data: all.body.data.slice(2, 4),
    });

    const seen = (await t.call(t.limited, 'GET', '/clients?perPage=500')).body.data.map(
      (c: any) => c.clientId,
    );
    expect(seen).toEqual(expect.arrayContaining(['in-1', 'in-12', 'limited']));
    for (const hidden of ['out-3', 'out-star', 'out-cam', 'out-cam2', 'root', 'plain'])
      expect(seen).not.toContain(hidden);
    expect((await t.call(t.root, 'GET', '/clients?perPage=501')).status).toBe(400);
  });

  it('changes sites, cameras and the admin right; disabling takes effect at once and retires the tokens, enabling takes new ones', async () => {
    await t.call(t.root, 'POST', '/clients', {
      clientId: 'edge-a',
      clientSecret: 'edge-a-secret',
      siteIds: [1],
    });
    const { token } = await t.login('edge-a', 'edge-a-secret');
    expect((await t.sites(token)).ids).toEqual([1]);
    const moved = await t.call(t.root, 'PATCH', '/clients/edge-a', {
      siteIds: [2, 3],
      cameraIds: '*',
      admin: true,
    });
    expect(moved).toMatchObject({
      status: 200,
      body: { clientId: 'edge-a', siteIds: [2, 3], cameraIds: '*', admin: true, disabled: false },
    });
    expect((await t.sites(token)).ids).toEqual([2, 3]); // the same token, the new sites, at once

    expect(
      (await t.call(t.root, 'PATCH', '/clients/edge-a', { disabled: true })).body.disabled,
    ).toBe(true);
    expect((await t.sites(token)).status).toBe(401);
    expect((await t.login('edge-a', 'edge-a-secret')).status).toBe(401);
    expect(
      (await t.call(t.root, 'PATCH', '/clients/edge-a', { disabled: false })).body.disabled,
    ).toBe(false);
    expect((await t.sites(token)).status).toBe(401); // issued before the disable
    const { token: fresh } = await t.login('edge-a', 'edge-a-secret');
    expect((await t.sites(fresh)).status).toBe(200);

    expect((await t.call(t.root, 'PATCH', '/clients/nobody', { disabled: true })).status).toBe(404);
    expect(await t.call(t.root, 'PATCH', '/clients/edge-a', {})).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('nothing to change') },
    });
    expect((await t.call(t.root, 'PATCH', '/clients/edge-a', { siteIds: [77] })).status).toBe(400);
    expect((await t.call(t.root, 'PATCH', '/clients/edge-a', { admin: 'yes' })).status).toBe(400);
    // An admin cannot lock itself out.
    for (const change of [{ disabled: true }, { admin: false }]) {
      const res = await t.call(t.root, 'PATCH', '/clients/root', change);
      expect(res.status, JSON.stringify(change)).toBe(403);
    }
    expect((await t.call(t.root, 'GET', '/clients?perPage=500')).status).toBe(200);
  });

  it('gives a client a role (full unless said), changed at once for its tokens; an admin keeps the role full itself', async () => {
    const v1 = async (token: string, method: 'GET' | 'POST', url: string, payload?: object) => {
      const res = await t.ctx.app.inject({ method, url, payload, headers: bearer(token) });
      return { status: res.statusCode, body: res.json() };
    };
    const alarm = {
      siteId: 1,
      alarmType: 'RoleTest',
      message: 'm',
      timestamp: '2026-11-01T00:00:00Z',
    };
    const plain = await t.call(t.root, 'POST', '/clients', {
      clientId: 'role-a',
      clientSecret: 'role-a-secret',
      siteIds: [1],
    });
    expect(plain.body.role).toBe('full');
    const created = await t.call(t.root, 'POST', '/clients', {
      clientId: 'role-b',
      clientSecret: 'role-b-secret',
      siteIds: [1],
      role: 'viewer',
    });
    expect(created).toMatchObject({ status: 201, body: { clientId: 'role-b', role: 'viewer' } });
    const bad = await t.call(t.root, 'POST', '/clients', {
      clientId: 'role-c',
      siteIds: [1],
      role: 'root',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe('/role');

    const { token } = await t.login('role-b', 'role-b-secret');
    expect((await v1(token, 'GET', '/v1/me')).body.role).toBe('viewer');
    expect((await v1(token, 'POST', '/v1/edge/alarms', alarm)).status).toBe(403);
    expect((await t.sites(token)).status).toBe(200);
    const changed = await t.call(t.root, 'PATCH', '/clients/role-b', { role: 'edge' });
    expect(changed).toMatchObject({ status: 200, body: { role: 'edge', siteIds: [1] } });
    // The same token, the new role, at once (the client cache here holds records for a minute).
    expect((await v1(token, 'POST', '/v1/edge/alarms', alarm)).status).toBe(201);
    expect((await t.sites(token)).status).toBe(403);
    expect((await v1(token, 'GET', '/v1/me')).body.role).toBe('edge');
    expect(
      t.logs.some(
        (l) =>
          l.includes('"action":"update client"') &&
          l.includes('"role":{"from":"viewer","to":"edge"}'),
      ),
    ).toBe(true);
    // A new secret keeps the role.
    const rotated = await t.call(t.root, 'POST', '/clients/role-b/secret');
    const after = await t.login('role-b', rotated.body.clientSecret);
    expect((await v1(after.token, 'GET', '/v1/me')).body.role).toBe('edge');
    const listed = await t.call(t.root, 'GET', '/clients?perPage=500');
    expect(
      listed.body.data.filter((c: { clientId: string }) => c.clientId.startsWith('role-')),
    ).toMatchObject([
      { clientId: 'role-a', role: 'full' },
      { clientId: 'role-b', role: 'edge' },
    ]);

    // Administration needs admin: true and the role full: an admin cannot give the role up itself.
    for (const role of ['viewer', 'operator', 'edge']) {
      const res = await t.call(t.root, 'PATCH', '/clients/root', { role });
      expect(res.status, role).toBe(403);
    }
    expect((await t.call(t.root, 'PATCH', '/clients/root', { role: 'full' })).status).toBe(200);
    await t.call(t.root, 'POST', '/clients', {
      clientId: 'role-admin',
      clientSecret: 'role-admin-secret',
      siteIds: '*',
      admin: true,
      role: 'operator',
    });
    const operatorAdmin = await t.login('role-admin', 'role-admin-secret');
    const refused = await t.call(operatorAdmin.token, 'GET', '/clients');
    expect(refused).toMatchObject({
      status: 403,
      body: { message: 'the role operator may not do this; it needs the role full' },
    });
  });

  it('rotates a secret: shown once; the old secret and the tokens issued before stop working', async () => {
    await t.call(t.root, 'POST', '/clients', {
      clientId: 'edge-b',
      clientSecret: 'edge-b-secret',
      siteIds: [1],
    });
    const before = await t.login('edge-b', 'edge-b-secret');
    const res = await t.call(t.root, 'POST', '/clients/edge-b/secret');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      clientId: 'edge-b',
      clientSecret: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    });
    expect((await t.sites(before.token)).status).toBe(401);
    expect((await t.login('edge-b', 'edge-b-secret')).status).toBe(401);
    const after = await t.login('edge-b', res.body.clientSecret);
    expect(after.status).toBe(200);
    expect((await t.sites(after.token)).status).toBe(200);
    expect((await t.call(t.root, 'POST', '/clients/nobody/secret')).status).toBe(404);
  });

  it('keeps a site-limited admin within its own sites and cameras (no escalation), 404 before 403', async () => {
    const refused = [
      { clientId: 'x1', siteIds: [3] },
      { clientId: 'x2', siteIds: '*' },
      { clientId: 'x3', siteIds: [1], cameraIds: '*' },
      { clientId: 'x4', siteIds: [1], cameraIds: [CAM.s3] },
      { clientId: 'x5', siteIds: [1, 3], admin: true },
    ];
    for (const body of refused) {
      const res = await t.call(t.limited, 'POST', '/clients', body);
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect(res.body.message).toBe('no access to one or more of the requested sites or cameras');
    }
    // Within its own, even an admin: not beyond itself.
    const sub = await t.call(t.limited, 'POST', '/clients', {
      clientId: 'sub-admin',
      siteIds: [2],
      cameraIds: [CAM.s2],
      admin: true,
    });
    expect(sub.status).toBe(201);
    expect(
      (await t.call(t.limited, 'PATCH', '/clients/sub-admin', { siteIds: [1, 2] })).status,
    ).toBe(200);
    expect(
      (await t.call(t.limited, 'PATCH', '/clients/sub-admin', { siteIds: [1, 3] })).status,
    ).toBe(403);
    expect(
      (await t.call(t.limited, 'PATCH', '/clients/sub-admin', { cameraIds: '*' })).status,
    ).toBe(403);
    expect((await t.call(t.limited, 'POST', '/clients/sub-admin/secret')).status).toBe(200);

    await t.call(t.root, 'POST', '/clients', {
      clientId: 'site-3-gw',
      clientSecret: 'site-3-secret',
      siteIds: [3],
    });
    for (const [method, url, body] of [
      ['PATCH', '/clients/site-3-gw', { disabled: true }],
      ['POST', '/clients/site-3-gw/secret', undefined],
      ['PATCH', '/clients/root', { siteIds: [1] }],
    ] as const) {
      const res = await t.call(t.limited, method, url, body);
      expect(res.status, url).toBe(403);
      expect(res.body.message).not.toMatch(/site 3|30701/);
    }
    expect((await t.login('site-3-gw', 'site-3-secret')).status).toBe(200); // untouched
    expect((await t.call(t.limited, 'PATCH', '/clients/nobody', { disabled: true })).status).toBe(
      404,
    );
    expect((await t.call(t.limited, 'POST', '/clients/nobody/secret')).status).toBe(404);

    // A site-limited admin whose cameras are '*' still gives only cameras of its own sites.
    await t.call(t.root, 'POST', '/clients', {
      clientId: 'limited-star',
      clientSecret: 'limited-star-secret',
      siteIds: [1],
      cameraIds: '*',
      admin: true,
    });
    const { token } = await t.login('limited-star', 'limited-star-secret');
    expect(
      (
        await t.call(token, 'POST', '/clients', {
          clientId: 'y1',
          siteIds: [1],
          cameraIds: [CAM.s2],
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await t.call(token, 'POST', '/clients', {
          clientId: 'y2',
          siteIds: [1],
          cameraIds: [CAM.s1, CAM.s1b],
        })
      ).status,
    ).toBe(201);
  });

  it('logs every admin action with the acting client and what changed, never a secret', async () => {
    const created = await t.call(t.root, 'POST', '/clients', {
      clientId: 'logged',
      clientSecret: 'logged-secret-value',
      siteIds: [1],
    });
    expect(created.status).toBe(201);
    await t.call(t.root, 'PATCH', '/clients/logged', { siteIds: [1, 2] });
    const rotated = (await t.call(t.root, 'POST', '/clients/logged/secret')).body.clientSecret;
    const generated = (
      await t.call(t.root, 'POST', '/clients', { clientId: 'logged-2', siteIds: [2] })
    ).body.clientSecret;
    const lines = t.logs.map((l) => JSON.parse(l)).filter((l) => l.audit);
    const about = (clientId: string) =>
      lines.filter((l) => l.audit.clientId === clientId).map((l) => l.audit);
    expect(about('logged')).toEqual([
      {
        actor: 'root',
        action: 'create client',
        clientId: 'logged',
        siteIds: [1],
        cameraIds: [],
        admin: false,
        role: 'full',
      },
      {
        actor: 'root',
        action: 'update client',
        clientId: 'logged',
        changes: { siteIds: { from: [1], to: [1, 2] } },
      },
      { actor: 'root', action: 'rotate client secret', clientId: 'logged' },
    ]);
    for (const l of lines) expect(typeof l.time).toBe('number');
    const all = t.logs.join('');
    for (const secret of ['logged-secret-value', rotated, generated])
      expect(all).not.toContain(secret);
  });
});
