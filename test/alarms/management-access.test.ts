import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { minutesAgo, SENSOR, SITE2_SENSOR } from './fixtures.js';
import { aroundNow, managementClient, type ManagementClient } from './management-fixtures.js';

// Alarm management and access (contract 2 and 16): another tenant's alarm is never visible nor
// changed (403 for its site, 404 for its id under a site of one's own); bad requests are 400s
// that change nothing.

const DEMO = { sites: 2, transactionsPerSite: 0, imagesPerSite: 0 };

describeEachBackend('alarm management: access and validation', (backend) => {
  let ctx: TestContext;
  let owner: ManagementClient; // reaches site 1 only
  let other: ManagementClient; // another tenant: site 2 only
  let site1Alarm: string;
  let site2Alarm: string;
  beforeAll(async () => {
    ctx = await startApp(backend, { demo: DEMO });
    owner = managementClient(ctx, await ctx.token([1], { clientId: 'owner' }));
    other = managementClient(ctx, await ctx.token([2], { clientId: 'other-tenant' }));
    const send = async (c: ManagementClient, siteId: number, sensorID: number) =>
      (
        await c.send({
          siteId,
          sensorID,
          alarmType: 'Secret',
          message: 'private',
          timestamp: minutesAgo(1),
        })
      ).body.SiteAlarmLogID as string;
    site1Alarm = await send(owner, 1, SENSOR);
    site2Alarm = await send(other, 2, SITE2_SENSOR);
  });
  afterAll(async () => ctx?.close());

  const rowOf = async (id: string) =>
    (
      await ctx.db.query(
        `SELECT acknowledged_at, shelved_until, resolved_at FROM site_alarms WHERE alarm_id = $1`,
        [id],
      )
    )[0];
  const journalCount = async () =>
    (await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM alarm_journal`))[0].n;

  it("another tenant's site is a 403 for every action, naming nothing, and nothing changes", async () => {
    const entries = await journalCount();
    for (const res of [
      await other.acknowledge(1, [site1Alarm]),
      await other.shelve(1, [site1Alarm], 10),
      await other.unshelve(1, [site1Alarm]),
      await other.list({ siteIds: [1], ...aroundNow() }),
      await other.list({ siteIds: [2, 1], ...aroundNow() }),
      await other.journal({ siteIds: [1], ...aroundNow() }),
      await other.journal({ siteIds: [1], ...aroundNow(), SiteAlarmLogID: site1Alarm }),
      await other.acknowledge(999, [site1Alarm]), // an unknown site answers the same
    ]) {
      expect(res.status).toBe(403);
      expect(JSON.stringify(res.body)).not.toContain(site1Alarm);
    }
    expect(await rowOf(site1Alarm)).toEqual({
      acknowledged_at: null,
      shelved_until: null,
      resolved_at: null,
    });
    expect(await journalCount()).toBe(entries);
  });

  it("another tenant's alarm under one's own site is a 404, as an id that does not exist; all or nothing", async () => {
    const entries = await journalCount();
    const res = await other.acknowledge(2, [site2Alarm, site1Alarm]);
    expect(res.status).toBe(404);
    expect(res.body.details).toEqual([
      { path: '/alarms/1/SiteAlarmLogID', message: `alarm ${site1Alarm} does not exist at site 2` },
    ]);
    const missing = await other.acknowledge(2, [site2Alarm, '999999']);
    expect(missing.status).toBe(404);
    expect(missing.body.details).toEqual([
      { path: '/alarms/1/SiteAlarmLogID', message: 'alarm 999999 does not exist at site 2' },
    ]);
    expect((await other.shelve(2, [site1Alarm], 5)).status).toBe(404);
    expect((await other.unshelve(2, [site1Alarm])).status).toBe(404);
    const journal = await other.journal({
      siteIds: [2],
      ...aroundNow(),
      SiteAlarmLogID: site1Alarm,
    });
    expect(journal.status).toBe(404);
    // Nothing of the batch was done: site 2's own alarm is still unacknowledged.
    expect((await rowOf(site2Alarm)).acknowledged_at).toBeNull();
    expect((await rowOf(site1Alarm)).acknowledged_at).toBeNull();
    expect(await journalCount()).toBe(entries);
  });

  it("lists and journals show only the requested sites' alarms", async () => {
    const list = await other.list({ siteIds: [2], ...aroundNow() });
    expect(list.status).toBe(200);
    expect(list.body.data.map((a: any) => a.SiteAlarmLogID)).toEqual([site2Alarm]);
    const journal = await other.journal({ siteIds: [2], ...aroundNow() });
    expect(journal.body.data.map((e: any) => [e.SiteAlarmLogID, e.SiteID])).toEqual([
      [site2Alarm, 2],
    ]);
    const mine = await owner.journal({ siteIds: [1], ...aroundNow(), SiteAlarmLogID: site1Alarm });
    expect(mine.body.data.map((e: any) => e.Event)).toEqual(['raised']);
  });

  it('malformed requests are 400s naming the field, and change nothing', async () => {
    const entries = await journalCount();
    const range = aroundNow();
    const note1001 = 'x'.repeat(1001);
    const cases: [string, unknown][] = [
      ['alarms/acknowledge', { alarms: [{ SiteAlarmLogID: site1Alarm }] }],
      ['alarms/acknowledge', { siteId: 1 }],
      ['alarms/acknowledge', { siteId: 1, alarms: [{}] }],
      ['alarms/acknowledge', { siteId: 1, alarms: [{ SiteAlarmLogID: 'abc' }] }],
      ['alarms/acknowledge', { siteId: 1, alarms: [{ SiteAlarmLogID: 0 }] }],
      [
        'alarms/acknowledge',
        { siteId: 1, alarms: [{ SiteAlarmLogID: site1Alarm, note: note1001 }] },
      ],
      ['alarms/acknowledge', { siteId: 'one', alarms: [] }],
      ['alarms/shelve', { siteId: 1, alarms: [{ SiteAlarmLogID: site1Alarm }] }],
      ['alarms/shelve', { siteId: 1, minutes: 0, alarms: [{ SiteAlarmLogID: site1Alarm }] }],
      ['alarms/shelve', { siteId: 1, minutes: 1441, alarms: [{ SiteAlarmLogID: site1Alarm }] }],
      ['alarms/shelve', { siteId: 1, minutes: 1.5, alarms: [{ SiteAlarmLogID: site1Alarm }] }],
      ['alarms/unshelve', { siteId: 1, alarms: [{ SiteAlarmLogID: '9223372036854775808' }] }],
      ['alarms/list', { siteIds: [1], ...range, page: 1 }],
      ['alarms/list', { siteIds: [], ...range, page: 1, perPage: 10 }],
      ['alarms/list', { siteIds: [1], ...range, page: 0, perPage: 10 }],
      ['alarms/list', { siteIds: [1], ...range, page: 1, perPage: 501 }],
      ['alarms/list', { siteIds: [1], ...range, state: 'open', page: 1, perPage: 10 }],
      ['alarms/list', { siteIds: [1], start: 'yesterday', end: range.end, page: 1, perPage: 10 }],
      ['alarms/list', { siteIds: [1], start: range.end, end: range.start, page: 1, perPage: 10 }],
      [
        'alarms/list',
        {
          siteIds: [1],
          start: '2025-01-01T00:00:00Z',
          end: '2026-01-03T00:00:00Z',
          page: 1,
          perPage: 10,
        },
      ],
      ['alarms/journal', { siteIds: [1], ...range, SiteAlarmLogID: 'x', page: 1, perPage: 10 }],
      ['alarms/journal', { siteIds: [1], start: range.start, page: 1, perPage: 10 }],
    ];
    for (const [path, body] of cases) {
      const res = await owner.post(path, body);
      expect(
        res.status,
        `${path} ${JSON.stringify(body).slice(0, 120)}: ${JSON.stringify(res.body)}`,
      ).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(res.body.message.length).toBeGreaterThan(0);
    }
    expect(await rowOf(site1Alarm)).toEqual({
      acknowledged_at: null,
      shelved_until: null,
      resolved_at: null,
    });
    expect(await journalCount()).toBe(entries);
  });

  it('a token is needed before anything else', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/alarms/acknowledge',
      payload: { siteId: 1, alarms: [{ SiteAlarmLogID: site1Alarm }] },
    });
    expect(res.statusCode).toBe(401);
  });
});
