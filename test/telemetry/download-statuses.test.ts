import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSigner } from 'fast-jwt';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { KINDS, METER, PUMP, SENSOR, SITE2_PUMP, SITE2_SENSOR, TANK } from './fixtures.js';
import {
  DOWNLOAD_URLS,
  downloader,
  expectError,
  IDS_FIELD,
  LOAD_URL,
  loadBody,
  RAW_URL,
  type Kind,
} from './download-fixtures.js';

// Every status of the five download routes (interface 4.4, 7; contract 1, 2, 6), each with the
// contract's error body, which stays JSON even when the request asked for CSV.

const OWN: Record<Kind, number> = { sensor: SENSOR, meter: METER, pump: PUMP, tank: TANK };
const SITE2: Record<Kind, number> = {
  sensor: SITE2_SENSOR,
  meter: 20301,
  pump: SITE2_PUMP,
  tank: 20501,
};
const LABEL: Record<Kind, string> = {
  sensor: 'sensor',
  meter: 'flow meter',
  pump: 'pump',
  tank: 'tank group',
};
const START = '2026-05-01T00:00:00Z';
const END = '2026-05-02T00:00:00Z';
const valid = (kind: Kind, ids: unknown = [OWN[kind]], more: Record<string, unknown> = {}) =>
  loadBody(kind, ids, START, END, more);
const rawBody = (more: Record<string, unknown> = {}) => ({
  sensorId: SENSOR,
  start: START,
  end: END,
  ...more,
});
/** A valid body of each route, by URL. */
const VALID_BODY: Record<string, unknown> = {
  ...Object.fromEntries(KINDS.map((k) => [LOAD_URL[k], valid(k)])),
  [RAW_URL]: rawBody(),
};
const CSV = { accept: 'text/csv' };

describeEachBackend('telemetry download statuses', (backend) => {
  let ctx: TestContext;
  let all: ReturnType<typeof downloader>;
  let site2: ReturnType<typeof downloader>;
  beforeAll(async () => {
    ctx = await startApp(backend, { settings: { ROLLUP_REFRESH_MS: 0 } });
    all = downloader(ctx, await ctx.token('*'));
    site2 = downloader(ctx, await ctx.token([2]));
  });
  afterAll(async () => ctx?.close());

  it('answers 200 with a JSON array to a valid request on each route', async () => {
    for (const url of DOWNLOAD_URLS) {
      const a = await all(url, VALID_BODY[url]);
      expect(a.status, `${url} ${a.text}`).toBe(200);
      expect(a.type, url).toMatch(/^application\/json/);
      expect(a.body, url).toEqual([]);
    }
  });

  it.each(KINDS)('answers 400 to bad %s summary requests, naming the field', async (kind) => {
    const url = LOAD_URL[kind];
    const field = IDS_FIELD[kind];
    const id = OWN[kind];
    const cases: [string, unknown, string][] = [
      ['no ids', { start: START, end: END }, `/${field}`],
      ['no start', { [field]: [id], end: END }, '/start'],
      ['no end', { [field]: [id], start: START }, '/end'],
      ['empty id list', valid(kind, []), `/${field}`],
      ['ids not a list', valid(kind, id), `/${field}`],
      ['an id not an integer', valid(kind, [id, 'x']), `/${field}/1`],
      ['an id of 0', valid(kind, [0]), `/${field}/0`],
      ['end equal to start', loadBody(kind, [id], START, START), '/end'],
      ['end before start', loadBody(kind, [id], END, START), '/end'],
      [
        'span of 366 days and 1 ms',
        loadBody(kind, [id], '2025-01-01T00:00:00Z', '2026-01-02T00:00:00.001Z'),
        '/end',
      ],
      ['unparsable start', loadBody(kind, [id], 'yesterday', END), '/start'],
      [
        'start on a day that does not exist',
        loadBody(kind, [id], '2026-02-30T00:00:00Z', END),
        '/start',
      ],
      ['unparsable end', loadBody(kind, [id], START, '2026-05-02T25:61:00Z'), '/end'],
      ['start not a string', { ...valid(kind), start: 1_700_000_000_000 }, '/start'],
      ['unknown interval', valid(kind, [id], { interval: '2h' }), '/interval'],
      ['unknown time zone', valid(kind, [id], { timeZone: 'Mars/Olympus_Mons' }), '/timeZone'],
      ['an offset as zone', valid(kind, [id], { timeZone: '+03:00' }), '/timeZone'],
      ['an offset from GMT as zone', valid(kind, [id], { timeZone: 'GMT+3' }), '/timeZone'],
      ['a POSIX zone rule', valid(kind, [id], { timeZone: 'EST5EDT,M3.2.0,M11.1.0' }), '/timeZone'],
      ['an empty zone', valid(kind, [id], { timeZone: '' }), '/timeZone'],
    ];
    for (const [what, body, path] of cases) {
      const a = await all(url, body);
      expectError(a, 400, 'Bad Request');
      expect(
        a.body.details?.map((d: { path: string }) => d.path),
        `${kind}: ${what}`,
      ).toContain(path);
    }
    // A body that is not an object, and one that is not JSON.
    expectError(await all(url, [valid(kind)]), 400, 'Bad Request');
    expectError(await all(url, '{"start":'), 400, 'Bad Request');
    // Exactly 366 days is allowed.
    expect(
      (
        await all(
          url,
          loadBody(kind, [id], '2025-01-01T00:00:00Z', '2026-01-02T00:00:00Z', { interval: 'all' }),
        )
      ).status,
    ).toBe(200);
  });

  it('answers 400 to timeZone "site" when a site of the request has a zone the service does not know', async () => {
    const doc = generateDemo({ idBase: 30, sites: 1, transactionsPerSite: 0, imagesPerSite: 0 });
    doc.sites[0].TimeZone = 'Mars/Olympus_Mons';
    await importDocument(ctx.db, doc);
    const a = await all(LOAD_URL.sensor, valid('sensor', [SENSOR, 310100], { timeZone: 'site' }));
    expectError(a, 400, 'Bad Request');
    expect(a.body.details).toEqual([{ path: '/timeZone', message: expect.any(String) }]);
    expect(
      (await all(LOAD_URL.sensor, valid('sensor', [SENSOR, 310100], { timeZone: 'Europe/Berlin' })))
        .status,
    ).toBe(200);
  });

  it('answers 400 when a summary request would make over 2,000,000 summaries', async () => {
    // 57 ids x a year of quarters is over the bound; it is refused before the ids are looked up.
    const ids = Array.from({ length: 57 }, (_, i) => 900_000 + i);
    const body = loadBody('sensor', ids, '2025-01-01T00:00:00Z', '2026-01-02T00:00:00Z', {
      interval: '15m',
    });
    const a = await all(LOAD_URL.sensor, body);
    expectError(a, 400, 'Bad Request');
    expect(a.body.details).toEqual([{ path: '/sensorIds', message: expect.any(String) }]);
    // 56 of them are within the bound (then they are unknown).
    expect((await all(LOAD_URL.sensor, { ...body, sensorIds: ids.slice(1) })).status).toBe(404);
  });

  it('answers 400 to bad raw requests: fields, times, and a span over 60 days', async () => {
    const cases: [string, unknown, string][] = [
      ['no sensorId', { start: START, end: END }, '/sensorId'],
      ['sensorId a list', rawBody({ sensorId: [SENSOR] }), '/sensorId'],
      ['no start', { sensorId: SENSOR, end: END }, '/start'],
      ['no end', { sensorId: SENSOR, start: START }, '/end'],
      ['end equal to start', rawBody({ end: START }), '/end'],
      ['end before start', rawBody({ start: END, end: START }), '/end'],
      [
        'span of 60 days and 1 ms',
        rawBody({ start: '2026-01-01T00:00:00Z', end: '2026-03-02T00:00:00.001Z' }),
        '/end',
      ],
      ['unparsable start', rawBody({ start: 'not a time' }), '/start'],
      ['unparsable end', rawBody({ end: '2026-13-01T00:00:00Z' }), '/end'],
    ];
    for (const [what, body, path] of cases) {
      const a = await all(RAW_URL, body);
      expectError(a, 400, 'Bad Request');
      expect(
        a.body.details?.map((d: { path: string }) => d.path),
        what,
      ).toContain(path);
    }
    expect(
      (await all(RAW_URL, rawBody({ start: '2026-01-01T00:00:00Z', end: '2026-03-02T00:00:00Z' })))
        .status,
    ).toBe(200);
  });

  it.each(KINDS)(
    'answers 404 for unknown %s ids, before 403, with a short message',
    async (kind) => {
      const url = LOAD_URL[kind];
      const one = await all(url, valid(kind, [OWN[kind], 999_999]));
      expectError(one, 404, 'Not Found');
      expect(one.body.message).toContain('999999');
      expect(one.body.message).toContain(LABEL[kind]);
      // An id of another kind is unknown to this one.
      const other = kind === 'sensor' ? PUMP : SENSOR;
      expectError(await all(url, valid(kind, [other])), 404, 'Not Found');
      // Unknown and out of reach in one request: the same 404 any client gets.
      const both = await site2(url, valid(kind, [OWN[kind], 999_999]));
      expectError(both, 404, 'Not Found');
      expect(both.body.message).toBe(one.body.message);
      // Many unknown ids: the message names a few and counts the rest.
      const many = Array.from({ length: 500 }, (_, i) => 1_000_000 + i);
      const long = await all(url, valid(kind, many));
      expectError(long, 404, 'Not Found');
      expect(long.body.message.length, long.body.message.slice(0, 300)).toBeLessThanOrEqual(200);
      expect(long.body.message).toMatch(/and \d+ more/);
    },
  );

  it('answers 404 for an unknown raw sensor, before 403', async () => {
    const a = await all(RAW_URL, rawBody({ sensorId: 999_999 }));
    expectError(a, 404, 'Not Found');
    expect(a.body.message).toContain('999999');
    expect(await site2(RAW_URL, rawBody({ sensorId: 999_999 }))).toMatchObject({
      status: 404,
      body: a.body,
    });
  });

  it('answers 403 as a whole when any id is of a site out of reach, naming nothing of it', async () => {
    const site1Ids = [...Object.values(OWN), 1];
    const refusals = [
      ...KINDS.map((k) => [LOAD_URL[k], valid(k, [SITE2[k], OWN[k]])] as const),
      ...KINDS.map((k) => [LOAD_URL[k], valid(k, [OWN[k]])] as const),
      [RAW_URL, rawBody()] as const,
    ];
    const leaks: string[] = [];
    for (const [url, body] of refusals) {
      const a = await site2(url, body);
      expectError(a, 403, 'Forbidden');
      const text = `${a.body.message} ${JSON.stringify(a.body.details ?? [])}`;
      if (site1Ids.some((id) => new RegExp(`\\b${id}\\b`).test(text)))
        leaks.push(`${url}: ${text}`);
    }
    // The same client reaches its own site's equipment.
    for (const k of KINDS)
      expect((await site2(LOAD_URL[k], valid(k, [SITE2[k]]))).status, k).toBe(200);
    expect((await site2(RAW_URL, rawBody({ sensorId: SITE2_SENSOR }))).status).toBe(200);
    // A client without any site reaches nothing.
    const none = downloader(ctx, await ctx.token([]));
    expectError(await none(LOAD_URL.sensor, valid('sensor', [SITE2_SENSOR])), 403, 'Forbidden');
    // Checked last, so that the statuses above are checked even while a message leaks.
    expect(leaks).toEqual([]);
  });

  it('answers 401 without a token, with a malformed one and with one of another signer', async () => {
    const forged = createSigner({ key: 'another-secret-of-at-least-32-characters' })({
      sub: 'client-1',
      jti: 'x',
    });
    for (const url of DOWNLOAD_URLS)
      for (const token of [null, 'not.a.token', forged]) {
        const a = await downloader(ctx, token)(url, VALID_BODY[url], CSV);
        expectError(a, 401, 'Unauthorized');
      }
  });

  it('keeps error bodies JSON when the request prefers CSV', async () => {
    expectError(await all(LOAD_URL.pump, valid('pump', []), CSV), 400, 'Bad Request');
    expectError(await all(LOAD_URL.tank, valid('tank', [999_999]), CSV), 404, 'Not Found');
    expectError(await site2(LOAD_URL.meter, valid('meter'), CSV), 403, 'Forbidden');
    expectError(await all(RAW_URL, rawBody({ end: START }), CSV), 400, 'Bad Request');
    expectError(
      await all(LOAD_URL.sensor, valid('sensor', [SENSOR], { timeZone: 'Nowhere/Land' }), CSV),
      400,
      'Bad Request',
    );
  });
});

describeEachBackend('telemetry download limits', (backend) => {
  describe('MAX_BATCH', () => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await startApp(backend, {
        demo: { sites: 1, transactionsPerSite: 0, imagesPerSite: 0 },
        settings: { MAX_BATCH: 3, ROLLUP_REFRESH_MS: 0 },
      });
    });
    afterAll(async () => ctx?.close());

    it.each(KINDS)(
      'answers 400 to more than MAX_BATCH %s ids, and 200 to MAX_BATCH of them',
      async (kind) => {
        const get = downloader(ctx, await ctx.token('*'));
        const id = OWN[kind];
        const over = await get(LOAD_URL[kind], valid(kind, [id, id, id, id]));
        expectError(over, 400, 'Bad Request');
        expect(over.body.details.map((d: { path: string }) => d.path)).toContain(
          `/${IDS_FIELD[kind]}`,
        );
        expect((await get(LOAD_URL[kind], valid(kind, [id, id, id]))).status).toBe(200);
      },
    );
  });

  describe('rate limit', () => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await startApp(backend, {
        demo: { sites: 1, transactionsPerSite: 0, imagesPerSite: 0 },
        settings: { RATE_LIMIT_MAX: 5, ROLLUP_REFRESH_MS: 0 },
      });
    });
    afterAll(async () => ctx?.close());

    it('answers 429 with retry-after and the error body on every route once the client used its share', async () => {
      const get = downloader(ctx, await ctx.token('*'));
      for (const url of DOWNLOAD_URLS)
        expect((await get(url, VALID_BODY[url])).status, url).toBe(200);
      for (const url of DOWNLOAD_URLS) {
        const a = await get(url, VALID_BODY[url], CSV);
        expectError(a, 429, 'Too Many Requests');
        expect(Number(a.res.headers['retry-after']), url).toBeGreaterThan(0);
        expect(a.res.headers['x-ratelimit-remaining'], url).toBe('0');
      }
    });
  });
});
