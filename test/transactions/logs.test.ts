import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDocument } from '../../src/provisioning/import.js';
import { transactionPages } from '../../src/transactions/logs.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { DAY, expectedLogs, iso, NOW, transactions } from './fixture.js';

const URL = '/v1/transactions/logs/load';
const ALL_TIME = { start: '2026-01-01T00:00:00Z', end: '2026-12-31T00:00:00Z' };

describeEachBackend('transaction logs', (backend) => {
  let ctx: TestContext;
  let all: string;
  const load = (token: string, payload: object, accept?: string) =>
    ctx.app.inject({
      method: 'POST',
      url: URL,
      headers: { ...bearer(token), ...(accept ? { accept } : {}) },
      payload,
    });

  beforeAll(async () => {
    ctx = await startApp(backend, { demo: { now: NOW } });
    all = await ctx.token('*', { cameraIds: '*' });
  });
  afterAll(async () => ctx?.close());

  describe('200', () => {
    it('lists the tickets of the requested sites ordered by date then id, with their ticket photos', async () => {
      const res = await load(all, { siteIds: [2, 1], ...ALL_TIME });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      const body = res.json();
      expect(body).toEqual(expectedLogs([1, 2], ALL_TIME.start, ALL_TIME.end));
      expect(body).toHaveLength(60);
      expect(body.filter((t: any) => t.TicketImageIDs.length).length).toBe(6);
      expect(body.some((t: any) => 'MotionCaptureImageIDs' in t)).toBe(false);
    });

    it('reads [start, end): a ticket at start is in, one at end is out', async () => {
      const site3 = transactions().filter((t) => t.SiteID === 3);
      const start = site3[4].TransactionDate;
      const end = site3[9].TransactionDate;
      const body = (await load(all, { siteIds: [3], start, end })).json();
      expect(body.map((t: any) => t.TransactionID)).toEqual(
        site3.slice(4, 9).map((t) => t.TransactionID),
      );
      expect(body).toEqual(expectedLogs([3], start, end));
    });

    it('accepts times with an offset or without one (UTC)', async () => {
      const t = transactions().find((x) => x.SiteID === 1)!;
      const at = new Date(t.TransactionDate);
      const local = iso(at.getTime()).replace('Z', '');
      const offset = new Date(at.getTime() + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
      for (const start of [local, offset]) {
        const body = (await load(all, { siteIds: [1], start, end: iso(at.getTime() + 1) })).json();
        expect(body.map((x: any) => x.TransactionID)).toEqual([t.TransactionID]);
      }
    });

    it('adds the motion captures with motionCap when the client reaches every camera', async () => {
      const res = await load(all, { siteIds: [1, 4], ...ALL_TIME, motionCap: true });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toEqual(expectedLogs([1, 4], ALL_TIME.start, ALL_TIME.end, true));
      expect(body.filter((t: any) => t.MotionCaptureImageIDs.length).length).toBe(6);
      const cameras = await ctx.token([1, 4], { cameraIds: [10701, 10702, 40701, 40702, 99] });
      expect(
        (await load(cameras, { siteIds: [1, 4], ...ALL_TIME, motionCap: true })).json(),
      ).toEqual(body);
    });

    it('answers an empty list for a range without tickets', async () => {
      const res = await load(all, {
        siteIds: [1],
        start: '2001-01-01T00:00:00Z',
        end: '2001-02-01T00:00:00Z',
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual([]);
    });

    it('answers CSV when Accept prefers it: field names, RFC 4180, null empty, id lists space-separated', async () => {
      const res = await load(all, { siteIds: [2], ...ALL_TIME, motionCap: true }, 'text/csv');
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
      const lines = res.body.split('\r\n');
      expect(lines[0]).toBe(
        'TransactionID,TicketNumber,SiteID,SiteName,SiteCompany,TransactionDate,HaulerCompany,DriverName,TruckNumber,FluidType,' +
          'Volume,VolumeUnits,Notes,TicketImageIDs,MotionCaptureImageIDs',
      );
      const expected = expectedLogs([2], ALL_TIME.start, ALL_TIME.end, true);
      expect(lines).toHaveLength(expected.length + 2);
      expect(lines.at(-1)).toBe('');
      const last = expected.at(-1)!;
      expect(lines[expected.length]).toBe(
        [
          last.TransactionID,
          last.TicketNumber,
          2,
          last.SiteName,
          last.SiteCompany,
          last.TransactionDate,
          last.HaulerCompany,
          last.DriverName,
          last.TruckNumber,
          last.FluidType,
          last.Volume,
          last.VolumeUnits,
          last.Notes ?? '',
          last.TicketImageIDs.join(' '),
          last.MotionCaptureImageIDs!.join(' '),
        ].join(','),
      );
      // Null is empty: a ticket without notes (the demo's name the tank they were hauled from).
      await importDocument(ctx.db, {
        transactions: [
          {
            TransactionID: 19998,
            TicketNumber: 2,
            SiteID: 1,
            TransactionDate: '2018-06-01T00:00:00Z',
            Volume: 10,
            VolumeUnits: 'bbl',
            Notes: null,
          },
        ],
      });
      const noteless = await load(
        all,
        { siteIds: [1], start: '2018-01-01T00:00', end: '2018-12-01T00:00' },
        'text/csv',
      );
      expect(noteless.body.split('\r\n')[1]).toBe(
        '19998,2,1,Pecos SWD 1,Permian Water Services,2018-06-01T00:00:00.000Z,,,,,10,bbl,,',
      );
      expect(
        (await load(all, { siteIds: [2], ...ALL_TIME }, 'text/csv;q=0.5, application/json'))
          .headers['content-type'],
      ).toMatch(/json/);
    });

    it('quotes CSV fields that need it', async () => {
      await importDocument(ctx.db, {
        transactions: [
          {
            TransactionID: 19999,
            TicketNumber: 1,
            SiteID: 1,
            TransactionDate: '2019-06-01T00:00:00Z',
            Notes: 'said "hi", left\nearly',
          },
        ],
      });
      const res = await load(
        all,
        { siteIds: [1], start: '2019-01-01T00:00', end: '2019-12-01T00:00' },
        'text/csv',
      );
      expect(res.body.split('\r\n')[1]).toBe(
        '19999,1,1,Pecos SWD 1,Permian Water Services,2019-06-01T00:00:00.000Z,,,,,,,"said ""hi"", left\nearly",',
      );
    });
  });

  it('pages through tickets, ties in date included, the same for every page size (property)', async () => {
    const tied = Array.from({ length: 25 }, (_, i) => ({
      TransactionID: 48_000 + ((i * 7) % 25),
      TicketNumber: 900 + i,
      SiteID: 4 + (i % 2) * -2,
      TransactionDate: '2018-03-01T10:00:00.000Z',
    }));
    await importDocument(ctx.db, { transactions: tied });
    const q = {
      siteIds: [1, 2, 3, 4],
      start: Date.parse('2018-01-01'),
      end: Date.parse('2027-01-01'),
      motionCap: true,
    };
    const collect = async (size: number) => {
      const out: unknown[][] = [];
      for await (const page of transactionPages(ctx.db, q, size)) {
        expect(page.length).toBeLessThanOrEqual(size);
        out.push(...page);
      }
      return out;
    };
    const whole = await collect(100_000);
    const [{ n }] = await ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM transactions WHERE site_id BETWEEN 1 AND 4`,
    );
    expect(n).toBeGreaterThanOrEqual(120 + 25);
    expect(whole).toHaveLength(n);
    const keys = whole.map((r) => `${r[5]}|${String(r[0]).padStart(6, '0')}`);
    expect(keys).toEqual([...keys].sort());
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 40 }), async (size) => {
        expect(await collect(size)).toEqual(whole);
      }),
      { numRuns: 12 },
    );
  });

  describe('400', () => {
    it.each([
      [
        'an end before start',
        { siteIds: [1], start: '2026-05-02T00:00Z', end: '2026-05-01T00:00Z' },
        '/end',
      ],
      [
        'an end equal to start',
        { siteIds: [1], start: '2026-05-01T00:00Z', end: '2026-05-01T00:00Z' },
        '/end',
      ],
      [
        'a span over 366 days',
        { siteIds: [1], start: '2025-01-01T00:00Z', end: '2026-01-02T00:00:00.001Z' },
        '/end',
      ],
      [
        'an unparsable start',
        { siteIds: [1], start: 'yesterday morning', end: '2026-05-01T00:00Z' },
        '/start',
      ],
      ['a missing end', { siteIds: [1], start: '2026-05-01T00:00Z' }, '/end'],
      ['no site', { siteIds: [], ...ALL_TIME }, '/siteIds'],
      ['a site id that is not a number', { siteIds: ['1'], ...ALL_TIME }, '/siteIds/0'],
      [
        'motionCap that is not a boolean',
        { siteIds: [1], ...ALL_TIME, motionCap: 'yes' },
        '/motionCap',
      ],
    ])('%s', async (_, payload, path) => {
      const res = await load(all, payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().details[0].path).toBe(path);
    });

    it('accepts a span of exactly 366 days', async () => {
      expect(
        (
          await load(all, {
            siteIds: [1],
            start: '2025-01-01T00:00:00Z',
            end: iso(Date.parse('2025-01-01') + 366 * DAY),
          })
        ).statusCode,
      ).toBe(200);
    });
  });

  describe('403', () => {
    it('refuses a site out of reach, or one that does not exist, as a whole, naming none', async () => {
      const site1 = await ctx.token([1], { cameraIds: '*' });
      for (const siteIds of [[1, 2], [2], [1, 777]]) {
        const res = await load(site1, { siteIds, ...ALL_TIME });
        expect(res.statusCode).toBe(403);
        expect(res.json().message).toBe('no access to one or more of the requested sites');
      }
      expect((await load(all, { siteIds: [1, 777], ...ALL_TIME })).statusCode).toBe(403);
      expect((await load(site1, { siteIds: [1], ...ALL_TIME })).statusCode).toBe(200);
    });

    it('refuses motionCap unless the client reaches every camera of every requested site', async () => {
      const oneCamera = await ctx.token([1, 2], { cameraIds: [10701, 10702, 20701] });
      const res = await load(oneCamera, { siteIds: [1, 2], ...ALL_TIME, motionCap: true });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).not.toMatch(/20702/);
      expect(
        (await load(oneCamera, { siteIds: [1], ...ALL_TIME, motionCap: true })).statusCode,
      ).toBe(200);
      expect(
        (await load(oneCamera, { siteIds: [1, 2], ...ALL_TIME, motionCap: false })).statusCode,
      ).toBe(200);
      const none = await ctx.token([1]);
      expect((await load(none, { siteIds: [1], ...ALL_TIME, motionCap: true })).statusCode).toBe(
        403,
      );
    });
  });

  it('401 without a token', async () => {
    expect(
      (await ctx.app.inject({ method: 'POST', url: URL, payload: { siteIds: [1], ...ALL_TIME } }))
        .statusCode,
    ).toBe(401);
  });

  it('documents the four routes in the OpenAPI document, with their media types and statuses', async () => {
    const doc = (await ctx.app.inject({ url: '/openapi.json' })).json();
    const op = (path: string) => doc.paths[path].post;
    const logs = op('/v1/transactions/logs/load');
    expect(logs.operationId).toBe('loadTransactionLogs');
    expect(Object.keys(logs.responses['200'].content)).toEqual(['application/json', 'text/csv']);
    expect(logs.responses['200'].content['application/json'].schema.items.$ref).toBe(
      '#/components/schemas/TransactionLogDto',
    );
    expect(logs.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/TransactionLogsLoadDto',
    );
    const changes = op('/v1/transactions/change-logs');
    expect(changes.operationId).toBe('loadTransactionChangeLogs');
    expect(changes.description).toMatch(/changes nothing/);
    expect(Object.keys(changes.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '413',
      '415',
      '429',
      '503',
    ]);
    for (const [path, id] of [
      ['/v1/images/tickets', 'downloadTicketImages'],
      ['/v1/images/motion-capture', 'downloadMotionCaptureImages'],
    ]) {
      expect(op(path).operationId).toBe(id);
      expect(op(path).responses['200'].content['application/zip'].schema).toEqual({
        type: 'string',
        format: 'binary',
      });
      expect(Object.keys(op(path).responses).sort()).toEqual([
        '200',
        '400',
        '401',
        '403',
        '404',
        '413',
        '415',
        '429',
        '500',
        '503',
      ]);
      expect(op(path).requestBody.content['application/json'].schema.$ref).toBe(
        '#/components/schemas/ImagesPayloadDto',
      );
    }
  });
});
