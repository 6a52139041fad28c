import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDocument } from '../../src/provisioning/import.js';
import { changeLogPages } from '../../src/transactions/change-logs.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { DAY, demo, expectedChanges, iso, NOW } from './fixture.js';

const URL = '/v1/transactions/change-logs';
// The demo's tickets and their edits fall in the week before NOW.
const WEEKS = { start: iso(NOW.getTime() - 20 * DAY), end: iso(NOW.getTime() + DAY) };

describeEachBackend('transaction change logs', (backend) => {
  let ctx: TestContext;
  let all: string;
  const changes = (token: string, payload: object) =>
    ctx.app.inject({ method: 'POST', url: URL, headers: bearer(token), payload });

  beforeAll(async () => {
    ctx = await startApp(backend, { demo: { now: NOW } });
    all = await ctx.token('*');
  });
  afterAll(async () => ctx?.close());

  describe('200', () => {
    it('lists every edit in [start, end) ordered by ChangeDate, with the site, its company and the items', async () => {
      const res = await changes(all, WEEKS);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = res.json();
      const expected = expectedChanges(WEEKS.start, WEEKS.end);
      expect(expected.length).toBeGreaterThan(120);
      expect(body).toEqual(expected);
      expect(Object.keys(body[0])).toEqual([
        'TransactionID',
        'LogTypeName',
        'LogType',
        'TicketNumber',
        'SiteID',
        'SiteName',
        'SiteCompany',
        'Editor',
        'EditorCompany',
        'ChangeDate',
        'ChangeItems',
      ]);
      expect(Object.keys(body[0].ChangeItems[0])).toEqual([
        'PropertyName',
        'OriginalValue',
        'NewValue',
      ]);
    });

    it('reads [start, end): an edit at start is in, one at end is out', async () => {
      const every = expectedChanges(WEEKS.start, WEEKS.end);
      const start = every[10].ChangeDate;
      const end = every[20].ChangeDate;
      const body = (await changes(all, { start, end })).json();
      expect(body).toEqual(every.slice(10, 20));
    });

    it('filters by site and by ticket number, together or apart; an empty filter list is no filter', async () => {
      const tickets = [300_005, 300_008, 100_004, 999_999];
      const cases: [object, (c: any) => boolean][] = [
        [{ siteIds: [3] }, (c) => c.SiteID === 3],
        [{ siteIds: [3, 1] }, (c) => [1, 3].includes(c.SiteID)],
        [{ ticketNums: tickets }, (c) => tickets.includes(c.TicketNumber)],
        [
          { siteIds: [3], ticketNums: tickets },
          (c) => c.SiteID === 3 && tickets.includes(c.TicketNumber),
        ],
        [{ siteIds: [], ticketNums: [] }, () => true],
        [{}, () => true],
      ];
      for (const [filters, keep] of cases) {
        const body = (await changes(all, { ...WEEKS, filters })).json();
        const expected = expectedChanges(WEEKS.start, WEEKS.end, keep);
        expect(expected.length, JSON.stringify(filters)).toBeGreaterThan(0);
        expect(body, JSON.stringify(filters)).toEqual(expected);
      }
    });

    it('searches only the sites the client reaches when no site filter is given', async () => {
      const some = await ctx.token([2, 4]);
      const body = (await changes(some, WEEKS)).json();
      expect(body).toEqual(
        expectedChanges(WEEKS.start, WEEKS.end, (c) => [2, 4].includes(c.SiteID)),
      );
      const byTicket = (
        await changes(some, { ...WEEKS, filters: { ticketNums: [100_004, 200_004] } })
      ).json();
      expect(byTicket.map((c: any) => c.TicketNumber)).toEqual(expect.arrayContaining([200_004]));
      expect(byTicket.every((c: any) => c.SiteID === 2)).toBe(true);
    });

    it('is a read: nothing changes however often it is called', async () => {
      const count = async () =>
        (
          await ctx.db.query(
            `SELECT (SELECT count(*) FROM transaction_changes)::int AS c, (SELECT count(*) FROM transactions)::int AS t`,
          )
        )[0];
      const before = await count();
      for (let i = 0; i < 3; i++) expect((await changes(all, WEEKS)).statusCode).toBe(200);
      expect(await count()).toEqual(before);
    });

    it('accepts exactly 60 days and answers [] where nothing changed', async () => {
      const res = await changes(all, {
        start: '2001-01-01T00:00:00Z',
        end: iso(Date.parse('2001-01-01') + 60 * DAY),
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual([]);
    });
  });

  it('pages through edits, ties in ChangeDate included, the same for every page size (property)', async () => {
    const t = { ...demo().transactions[0] };
    t.Changes = Array.from({ length: 12 }, (_, i) => ({
      LogTypeName: 'Service Item',
      LogType: 5,
      Editor: `Editor ${i}`,
      EditorCompany: 'Audit',
      ChangeDate: '2026-02-01T00:00:00Z',
      ChangeItems: [{ PropertyName: 'Rate', OriginalValue: String(i), NewValue: String(i + 1) }],
    }));
    await importDocument(ctx.db, { transactions: [t] });
    const q = {
      start: Date.parse('2026-01-15'),
      end: NOW.getTime() + DAY,
      siteIds: null,
      ticketNumbers: null,
    };
    const collect = async (size: number) => {
      const out: unknown[][] = [];
      for await (const page of changeLogPages(ctx.db, q, size)) out.push(...page);
      return out;
    };
    const whole = await collect(100_000);
    expect(whole.filter((r) => r[9] === '2026-02-01T00:00:00.000Z')).toHaveLength(12);
    const dates = whole.map((r) => r[9] as string);
    expect(dates).toEqual([...dates].sort());
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 30 }), async (size) => {
        expect(await collect(size)).toEqual(whole);
      }),
      { numRuns: 10 },
    );
  });

  describe('400', () => {
    it.each([
      [
        'a span over 60 days',
        { start: '2026-01-01T00:00:00Z', end: '2026-03-02T00:00:00.001Z' },
        '/end',
      ],
      ['an end before start', { start: '2026-05-02T00:00Z', end: '2026-05-01T00:00Z' }, '/end'],
      ['an end equal to start', { start: '2026-05-01T00:00Z', end: '2026-05-01T00:00Z' }, '/end'],
      ['an unparsable end', { start: '2026-05-01T00:00Z', end: '2026-13-01T00:00Z' }, '/end'],
      ['a missing start', { end: '2026-05-01T00:00Z' }, '/start'],
      [
        'a site filter that is not a list',
        { ...WEEKS, filters: { siteIds: 3 } },
        '/filters/siteIds',
      ],
      [
        'a ticket number that is not a number',
        { ...WEEKS, filters: { ticketNums: ['300005'] } },
        '/filters/ticketNums/0',
      ],
    ])('%s', async (_, payload, path) => {
      const res = await changes(all, payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().details[0].path).toBe(path);
    });
  });

  it('403 when the site filter names a site out of reach or one that does not exist, naming none', async () => {
    const some = await ctx.token([2, 4]);
    for (const siteIds of [[1], [2, 3], [2, 888]]) {
      const res = await changes(some, { ...WEEKS, filters: { siteIds } });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe('no access to one or more of the requested sites');
    }
    expect((await changes(all, { ...WEEKS, filters: { siteIds: [888] } })).statusCode).toBe(403);
  });

  it('401 without a token', async () => {
    expect((await ctx.app.inject({ method: 'POST', url: URL, payload: WEEKS })).statusCode).toBe(
      401,
    );
  });
});
