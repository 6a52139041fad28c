import { expect, it } from 'vitest';
import { generateDemo } from '../../src/provisioning/demo.js';
import { describeEachBackend } from '../helper.js';
import { adminSuite, CAM } from './fixture.js';

const demo = () => generateDemo({ sites: 3, transactionsPerSite: 1, imagesPerSite: 0 });
const first = <T>(xs: T[], site: number) =>
  structuredClone(xs.find((r: any) => r.SiteID === site)!);

describeEachBackend('admin API: import', (backend) => {
  const t = adminSuite(backend, { BODY_LIMIT: 256 * 1024 });
  const name = async (sensorId: number) =>
    (await t.ctx.db.query(`SELECT name FROM sensors WHERE sensor_id = $1`, [sensorId]))[0]?.name;

  it('imports a provisioning document in one transaction: 200 with counts per list; the same document again changes nothing', async () => {
    const doc = generateDemo({ idBase: 40, sites: 1, transactionsPerSite: 2, imagesPerSite: 0 });
    const res = await t.call(t.root, 'POST', '/import', doc);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.sites).toEqual({ received: 1, changed: 1 });
    expect(res.body.sensors).toEqual({ received: doc.sensors.length, changed: doc.sensors.length });
    const again = await t.call(t.root, 'POST', '/import', doc);
    expect(again.body.sensors).toEqual({ received: doc.sensors.length, changed: 0 });
    const audit = t.logs
      .map((l) => JSON.parse(l))
      .find((l) => l.audit?.action === 'import document');
    expect(audit.audit).toMatchObject({
      actor: 'root',
      lists: { sites: { received: 1, changed: 1 } },
    });
  });

  it('answers 400 naming the first bad record (JSON pointer in details) and changes nothing', async () => {
    const sensor = { ...first(demo().sensors, 1), Name: 'must not land' };
    const pump = { ...first(demo().pumps, 1), MaximumFlow: 'lots' };
    const res = await t.call(t.root, 'POST', '/import', { sensors: [sensor], pumps: [pump] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      message: expect.stringMatching(
        /^import failed, nothing was changed: pumps\[0\]\.MaximumFlow: /,
      ),
      details: [{ path: '/pumps/0/MaximumFlow', message: expect.any(String) }],
    });
    const missing = await t.call(t.root, 'POST', '/import', {
      registers: [{ ...demo().registers[0], SiteModbusInOutDeviceID: 987654 }],
    });
    expect(missing.body.details).toEqual([
      { path: '/registers/0/SiteModbusInOutDeviceID', message: 'device 987654 does not exist' },
    ]);
    expect((await t.call(t.root, 'POST', '/import', { bogus: [] })).status).toBe(400);
    expect((await t.call(t.root, 'POST', '/import', [])).body.details).toEqual([
      { path: '/', message: 'must be a JSON object' },
    ]);
    const unknownSite = await t.call(t.root, 'POST', '/import', {
      clients: [{ clientId: 'c', clientSecret: 'secret-123', siteIds: [1, 99] }],
    });
    expect(unknownSite.body.details).toEqual([
      { path: '/clients/0/siteIds/1', message: 'site 99 does not exist' },
    ]);
    expect(await name(sensor.SiteSensorID)).not.toBe('must not land');
  });

  it('answers 400 for an id of 0 or below, naming the field, and changes nothing', async () => {
    const site = first(demo().sites, 1);
    for (const [doc, path, reason] of [
      [{ sites: [{ ...site, SiteID: 0 }] }, '/sites/0/SiteID', /^must be a positive integer/],
      [{ sites: [{ ...site, SiteID: -1 }] }, '/sites/0/SiteID', /^must be a positive integer/],
      [
        { sensors: [{ ...first(demo().sensors, 1), Name: 'must not land', UnitID: 0 }] },
        '/sensors/0/UnitID',
        /^must be a positive integer.* or null$/,
      ],
      [
        { registers: [{ ...demo().registers[0], SiteIODeviceRegisterID: '0' }] },
        '/registers/0/SiteIODeviceRegisterID',
        /^must be a positive 64-bit integer/,
      ],
    ] as const) {
      const res = await t.call(t.root, 'POST', '/import', doc);
      expect(res.status, path).toBe(400);
      expect(res.body.message, path).toMatch(/^import failed, nothing was changed: /);
      expect(res.body.details, path).toEqual([{ path, message: expect.stringMatching(reason) }]);
    }
    expect(await name(first(demo().sensors, 1).SiteSensorID)).not.toBe('must not land');
  });

  it("sets clients' roles (full when left out), and never takes the importing admin's own admin right or role full", async () => {
    const res = await t.call(t.root, 'POST', '/import', {
      clients: [
        { clientId: 'imp-op', clientSecret: 'secret-123', siteIds: [1], role: 'operator' },
        { clientId: 'imp-plain', clientSecret: 'secret-123', siteIds: [1] },
      ],
    });
    expect(res.status).toBe(200);
    const listed = await t.call(t.root, 'GET', '/clients?perPage=500');
    const roleOf = (id: string) =>
      listed.body.data.find((c: { clientId: string }) => c.clientId === id)?.role;
    expect([roleOf('imp-op'), roleOf('imp-plain')]).toEqual(['operator', 'full']);
    const bad = await t.call(t.root, 'POST', '/import', {
      clients: [{ clientId: 'imp-bad', clientSecret: 'secret-123', siteIds: [1], role: 'god' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toMatch(/^\/clients\/0\/role/);
    const self = { clientId: 'root', clientSecret: 'root-secret-1', siteIds: '*', cameraIds: '*' };
    for (const doc of [{ ...self, admin: true, role: 'viewer' }, self]) {
      const refused = await t.call(t.root, 'POST', '/import', { clients: [doc] });
      expect(refused.status, JSON.stringify(doc)).toBe(403);
      expect(refused.body.details).toEqual([
        { path: '/clients/0', message: 'the importing admin itself, without admin or role full' },
      ]);
    }
    expect((await t.call(t.root, 'GET', '/clients')).status).toBe(200);
  });

  it('refuses non-JSON bodies (415), bodies over the limit (413) and clients without admin rights (403)', async () => {
    expect(
      (await t.call(t.root, 'POST', '/import', '<doc/>', { 'content-type': 'application/xml' }))
        .status,
    ).toBe(415);
    expect(
      (await t.call(t.root, 'POST', '/import', 'sites', { 'content-type': 'text/plain' })).status,
    ).toBe(415);
    const huge = { sensors: Array.from({ length: 2000 }, () => first(demo().sensors, 1)) };
    expect((await t.call(t.root, 'POST', '/import', huge)).status).toBe(413);
    expect((await t.call(t.plain, 'POST', '/import', { sensors: [] })).status).toBe(403);
  });

  it('lets a site-limited admin import records of its own sites only: nothing of another site, moved from one, or companies', async () => {
    const d = demo();
    const own = { ...first(d.sensors, 1), Name: 'renamed by limited' };
    expect((await t.call(t.limited, 'POST', '/import', { sensors: [own] })).status).toBe(200);
    expect(await name(own.SiteSensorID)).toBe('renamed by limited');

    const site3Sensor = first(d.sensors, 3);
    const register3 = d.registers.find((r: any) =>
      String(r.SiteModbusInOutDeviceID).startsWith('3'),
    )!;
    const cases: [string, object, string][] = [
      [
        'a record of another site',
        { sensors: [{ ...site3Sensor, Name: 'x' }] },
        '/sensors/0/SiteID',
      ],
      [
        'a record moved from another site',
        { sensors: [{ ...site3Sensor, SiteID: 1, RegisterIDs: undefined }] },
        '/sensors/0/SiteSensorID',
      ],
      [
        'a new record at another site',
        { cameras: [{ CameraID: 39999, SiteID: 3, Name: 'new' }] },
        '/cameras/0/SiteID',
      ],
      ['that site itself', { sites: [{ ...first(d.sites, 3), Name: 'x' }] }, '/sites/0/SiteID'],
      [
        'a register of a device at another site',
        { registers: [{ ...register3, Name: 'x' }] },
        '/registers/0/SiteModbusInOutDeviceID',
      ],
      ['companies', { companies: [{ CompanyID: 1, Name: 'x' }] }, '/companies'],
      [
        'a client beyond its sites',
        { clients: [{ clientId: 'c3', clientSecret: 'secret-123', siteIds: [3] }] },
        '/clients/0',
      ],
      [
        'a client with every camera',
        { clients: [{ clientId: 'c3', clientSecret: 'secret-123', siteIds: [1], cameraIds: '*' }] },
        '/clients/0',
      ],
      [
        'an existing client beyond it',
        { clients: [{ clientId: 'plain', clientSecret: 'secret-123', siteIds: [1] }] },
        '/clients/0/clientId',
      ],
    ];
    for (const [what, doc, path] of cases) {
      const res = await t.call(t.limited, 'POST', '/import', {
        sensors: [{ ...own, Name: 'must not land' }],
        ...doc,
      });
      expect(res.status, what).toBe(403);
      expect(res.body, what).toEqual({
        statusCode: 403,
        error: 'Forbidden',
        message: 'no access to one or more of the sites this document touches',
        details: [{ path, message: 'outside the sites of this administrator' }],
      });
    }
    expect(await name(own.SiteSensorID)).toBe('renamed by limited'); // nothing of a refused document landed
    expect(await name(site3Sensor.SiteSensorID)).toBe(site3Sensor.Name);
    expect((await t.login('plain', 'secret-123')).status).toBe(401);

    const client = {
      clientId: 'gw-import',
      clientSecret: 'gw-import-secret',
      siteIds: [1, 2],
      cameraIds: [CAM.s1],
    };
    expect((await t.call(t.limited, 'POST', '/import', { clients: [client] })).status).toBe(200);
    const login = await t.login('gw-import', 'gw-import-secret');
    expect(await t.sites(login.token)).toEqual({ status: 200, ids: [1, 2] });
    // Importing it again with other sites applies to its tokens at once.
    expect(
      (await t.call(t.limited, 'POST', '/import', { clients: [{ ...client, siteIds: [2] }] }))
        .status,
    ).toBe(200);
    expect(await t.sites(login.token)).toEqual({ status: 200, ids: [2] });
    // The same import by an admin of every site may touch anything.
    expect(
      (
        await t.call(t.root, 'POST', '/import', {
          sensors: [{ ...site3Sensor, Name: 'renamed by root' }],
        })
      ).status,
    ).toBe(200);
    expect(await name(site3Sensor.SiteSensorID)).toBe('renamed by root');
  });
});
