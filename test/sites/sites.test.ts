import { afterAll, beforeAll, expect, it } from 'vitest';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';

describeEachBackend('GET /v1/sites', (backend) => {
  let ctx: TestContext;
  let all: string;
  beforeAll(async () => {
    // Six sites over two companies; the last one is inactive.
    ctx = await startApp(backend, {
      demo: { sites: 6, transactionsPerSite: 1, imagesPerSite: 0, sensorsPerSite: 2 },
    });
    all = await ctx.token('*');
  });
  afterAll(async () => ctx?.close());

  const get = async (query: string, token = all) => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: `/v1/sites?${query}`,
      headers: bearer(token),
    });
    return { status: res.statusCode, body: res.json(), headers: res.headers };
  };

  it('answers the pagination envelope with basic site records', async () => {
    const { status, body } = await get('page=1&perPage=4');
    expect(status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(['data', 'page', 'perPage', 'total', 'totalPages']);
    expect(body).toMatchObject({ page: 1, perPage: 4, total: 6, totalPages: 2 });
    expect(body.data.map((s: any) => s.SiteID)).toEqual([1, 2, 3, 4]);
    expect(Object.keys(body.data[0]).sort()).toEqual(
      [
        'Active',
        'CompanyID',
        'CompanyName',
        'CommLossMinutes',
        'Latitude',
        'Longitude',
        'Name',
        'ProjectID',
        'SiteID',
        'TimeZone',
      ].sort(),
    );
    expect(body.data[0]).toMatchObject({
      SiteID: 1,
      Name: 'Pecos SWD 1',
      CompanyID: 1,
      CompanyName: 'Permian Water Services',
      ProjectID: 101,
      Active: true,
      CommLossMinutes: 60,
    });
    const page2 = await get('page=2&perPage=4');
    expect(page2.body.data.map((s: any) => s.SiteID)).toEqual([5, 6]);
    const beyond = await get('page=9&perPage=4');
    expect(beyond.body).toMatchObject({ data: [], total: 6, totalPages: 2 });
  });

  it('filters by name (case-insensitive substring), active and companyId', async () => {
    expect((await get('page=1&perPage=50&name=TANK')).body.data.map((s: any) => s.Name)).toEqual([
      'Mentone Tank Battery',
    ]);
    expect((await get('page=1&perPage=50&name=%25')).body.total).toBe(0); // % is a character, not a wildcard
    expect(
      (await get('page=1&perPage=50&active=false')).body.data.map((s: any) => s.SiteID),
    ).toEqual([6]);
    expect((await get('page=1&perPage=50&active=true')).body.total).toBe(5);
    const c2 = (await get('page=1&perPage=50&companyId=2')).body;
    expect(c2.data.every((s: any) => s.CompanyID === 2)).toBe(true);
    expect(c2.total).toBe(3);
    expect(
      (await get('page=1&perPage=50&companyId=2&active=true&name=o')).body.data.map(
        (s: any) => s.SiteID,
      ),
    ).toEqual([2, 4]);
  });

  it('sorts by name, platformcompanyid and projectid in either direction, case ignored, ties by SiteID', async () => {
    const names = (await get('page=1&perPage=50&sortBy=NAME')).body.data.map((s: any) => s.Name);
    expect(names).toEqual(
      [...names].sort((a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase())),
    );
    const desc = (await get('page=1&perPage=50&sortBy=Name&sortDirection=desc')).body.data.map(
      (s: any) => s.Name,
    );
    expect(desc).toEqual([...names].reverse());
    const byCompany = (await get('page=1&perPage=50&sortBy=PlatformCompanyId')).body.data.map(
      (s: any) => [s.CompanyID, s.SiteID],
    );
    expect(byCompany).toEqual([
      [1, 1],
      [1, 3],
      [1, 5],
      [2, 2],
      [2, 4],
      [2, 6],
    ]);
    const byCompanyDesc = (
      await get('page=1&perPage=50&sortBy=platformcompanyid&sortDirection=DESC')
    ).body.data.map((s: any) => s.SiteID);
    expect(byCompanyDesc).toEqual([2, 4, 6, 1, 3, 5]);
    const byProject = (
      await get('page=1&perPage=50&sortBy=projectid&sortDirection=desc')
    ).body.data.map((s: any) => s.ProjectID);
    expect(byProject).toEqual([106, 105, 104, 103, 102, 101]);
  });

  it('lists only the sites the client may see', async () => {
    const limited = await ctx.token([2, 5]);
    const { body } = await get('page=1&perPage=50', limited);
    expect(body.data.map((s: any) => s.SiteID)).toEqual([2, 5]);
    expect(body.total).toBe(2);
    const none = await ctx.token([]);
    expect((await get('page=1&perPage=50', none)).body).toMatchObject({
      data: [],
      total: 0,
      totalPages: 0,
    });
  });

  it('adds LastCommunication, ActiveAlarmCount and Current with dataType=additional', async () => {
    await ctx.db.query(
      `UPDATE sites SET last_communication = '2026-03-01T06:00:00Z' WHERE site_id = 1`,
    );
    await ctx.db.query(
      `INSERT INTO site_alarms (site_id, alarm_type, severity, message, first_seen, last_seen) VALUES (1, 'HighPressure', 'major', 'x', now(), now()), (1, 'LowLevel', 'minor', 'y', now(), now())`,
    );
    await ctx.db.query(
      `INSERT INTO current_readings (equipment_kind, equipment_id, site_id, ts, record) VALUES ('sensor', 10100, 1, now(), '{"sensorID":10100,"value":41.5,"timestamp":"2026-03-01T06:00:00.000Z"}')`,
    );
    const { status, body } = await get('page=1&perPage=2&dataType=additional');
    expect(status).toBe(200);
    const [one, two] = body.data;
    expect(one.LastCommunication).toBe('2026-03-01T06:00:00.000Z');
    expect(one.ActiveAlarmCount).toBe(2);
    expect(one.Current).toEqual({
      sensors: [{ sensorID: 10100, value: 41.5, timestamp: '2026-03-01T06:00:00.000Z' }],
      meters: [],
      pumps: [],
      tankGroups: [],
    });
    expect(two).toMatchObject({
      LastCommunication: null,
      ActiveAlarmCount: 0,
      Current: { sensors: [], meters: [], pumps: [], tankGroups: [] },
    });
    const basic = (await get('page=1&perPage=1&dataType=basic')).body.data[0];
    expect(basic).not.toHaveProperty('LastCommunication');
    expect(basic).not.toHaveProperty('Current');
  });

  it('answers 400 for invalid query parameters', async () => {
    const bad = [
      '',
      'page=1',
      'perPage=5',
      'page=0&perPage=5',
      'page=1&perPage=0',
      'page=1&perPage=501',
      'page=x&perPage=5',
      'page=1&perPage=5&dataType=everything',
      'page=1&perPage=5&active=maybe',
      'page=1&perPage=5&companyId=abc',
      'page=1&perPage=5&sortDirection=up',
      'page=1&perPage=5&sortBy=SiteID',
      'page=1.5&perPage=5',
    ];
    for (const q of bad) {
      const { status, body } = await get(q);
      expect(status, q).toBe(400);
      expect(body, q).toMatchObject({
        statusCode: 400,
        error: 'Bad Request',
        message: expect.any(String),
      });
      expect(body.details?.[0]?.path, q).toMatch(/^\//);
    }
  });

  it('answers 401 without a token', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/sites?page=1&perPage=5' });
    expect(res.statusCode).toBe(401);
  });
});
