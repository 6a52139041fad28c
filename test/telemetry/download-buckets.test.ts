import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateDemo } from '../../src/provisioning/demo.js';
import { importDocument } from '../../src/provisioning/import.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { SENSOR } from './fixtures.js';
import {
  inBothStates,
  sensorLogs,
  sensorSummary as S,
  storeLogs,
  summaryLoader,
} from './download-fixtures.js';

// Buckets of the summary downloads (contract 6): widths, cuts at start and end, empty buckets left
// out, order, and the clock of the time zone (site zones, daylight saving, a 45-minute offset). Each
// expectation is checked on freshly uploaded (stale) buckets and again on refreshed rollups.

const KOLKATA_SENSOR = 110100; // site 11, imported with TimeZone Asia/Kolkata
const UTC_SENSOR = 210100; // site 21, imported without a TimeZone
const H = 3_600_000;

describeEachBackend('telemetry download buckets', (backend) => {
  let ctx: TestContext;
  let load: (
    ids: number[],
    start: string,
    end: string,
    more?: Record<string, unknown>,
  ) => Promise<unknown>;
  let store: (id: number, pairs: [string, number][]) => Promise<number>;
  beforeAll(async () => {
    ctx = await startApp(backend, { settings: { ROLLUP_REFRESH_MS: 0 } });
    const small = { sites: 1, transactionsPerSite: 0, imagesPerSite: 0 };
    const kolkata = generateDemo({ ...small, idBase: 10 });
    kolkata.sites[0].TimeZone = 'Asia/Kolkata';
    const utc = generateDemo({ ...small, idBase: 20 });
    delete utc.sites[0].TimeZone;
    await importDocument(ctx.db, kolkata);
    await importDocument(ctx.db, utc);
    const token = await ctx.token('*');
    const loader = summaryLoader(ctx, token);
    load = (ids, start, end, more) => loader('sensor', ids, start, end, more);
    store = (id, pairs) => storeLogs(ctx, token, 'sensor', sensorLogs(id, pairs));
  });
  afterAll(async () => ctx?.close());

  it('cuts 15m, 1h, 1d and all buckets at an unaligned start and end, leaves empty buckets out, and uses UTC and 1h by default', async () => {
    await store(SENSOR, [
      ['2026-05-31T23:00:00Z', 0],
      ['2026-06-01T09:50:00Z', 1],
      ['2026-06-01T10:05:00Z', 2],
      ['2026-06-01T10:07:30Z', 3],
      ['2026-06-01T10:10:00Z', 4],
      ['2026-06-01T10:20:00Z', 5],
      ['2026-06-01T10:59:59Z', 6],
      ['2026-06-01T11:00:00Z', 7],
      ['2026-06-01T11:14:59.999Z', 8],
      ['2026-06-01T11:40:00Z', 9],
      ['2026-06-01T13:05:00Z', 11],
      ['2026-06-01T13:22:29Z', 12],
      ['2026-06-01T13:22:30Z', 13],
      ['2026-06-02T00:30:00Z', 14],
    ]);
    const [start, end] = ['2026-06-01T10:07:30Z', '2026-06-01T13:22:30Z'];
    const d = (t: string) => `2026-06-01T${t}Z`;
    await inBothStates(ctx, async (state) => {
      expect
        .soft(await load([SENSOR], start, end, { interval: '15m' }), state)
        .toEqual([
          S(SENSOR, start, d('10:15:00'), [3, 4]),
          S(SENSOR, d('10:15:00'), d('10:30:00'), [5]),
          S(SENSOR, d('10:45:00'), d('11:00:00'), [6]),
          S(SENSOR, d('11:00:00'), d('11:15:00'), [7, 8]),
          S(SENSOR, d('11:30:00'), d('11:45:00'), [9]),
          S(SENSOR, d('13:00:00'), d('13:15:00'), [11]),
          S(SENSOR, d('13:15:00'), end, [12]),
        ]);
      const hours = [
        S(SENSOR, start, d('11:00:00'), [3, 4, 5, 6]),
        S(SENSOR, d('11:00:00'), d('12:00:00'), [7, 8, 9]),
        S(SENSOR, d('13:00:00'), end, [11, 12]),
      ];
      expect.soft(await load([SENSOR], start, end, { interval: '1h' }), state).toEqual(hours);
      expect.soft(await load([SENSOR], start, end), state).toEqual(hours);
      expect.soft(await load([SENSOR], start, end, { timeZone: 'UTC' }), state).toEqual(hours);
      // The same range written with an offset, and without one (UTC).
      expect
        .soft(await load([SENSOR], '2026-06-01T12:07:30+02:00', '2026-06-01T08:22:30-05:00'), state)
        .toEqual(hours);
      expect
        .soft(await load([SENSOR], '2026-06-01T10:07:30', '2026-06-01 13:22:30'), state)
        .toEqual(hours);
      const whole = [S(SENSOR, start, end, [3, 4, 5, 6, 7, 8, 9, 11, 12])];
      expect.soft(await load([SENSOR], start, end, { interval: '1d' }), state).toEqual(whole);
      expect.soft(await load([SENSOR], start, end, { interval: 'all' }), state).toEqual(whole);

      // Whole days between cut ones; "all" ignores the zone.
      const [from, to] = ['2026-05-31T22:00:00Z', '2026-06-02T06:00:00Z'];
      expect
        .soft(await load([SENSOR], from, to, { interval: '1d' }), state)
        .toEqual([
          S(SENSOR, from, '2026-06-01T00:00:00Z', [0]),
          S(
            SENSOR,
            '2026-06-01T00:00:00Z',
            '2026-06-02T00:00:00Z',
            [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13],
          ),
          S(SENSOR, '2026-06-02T00:00:00Z', to, [14]),
        ]);
      const everything = [S(SENSOR, from, to, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14])];
      expect.soft(await load([SENSOR], from, to, { interval: 'all' }), state).toEqual(everything);
      expect
        .soft(
          await load([SENSOR], from, to, { interval: 'all', timeZone: 'Asia/Kathmandu' }),
          state,
        )
        .toEqual(everything);
      // A range holding no log gives an empty list.
      expect
        .soft(
          await load([SENSOR], '2026-06-01T11:45:00Z', '2026-06-01T13:00:00Z', { interval: '15m' }),
          state,
        )
        .toEqual([]);
    });
  });

  it('orders by id then bucket, whatever the order of the ids, and answers a repeated id once', async () => {
    await store(10102, [
      ['2026-06-03T10:30:00Z', 1],
      ['2026-06-03T12:15:00Z', 2],
    ]);
    await store(10103, [
      ['2026-06-03T10:45:00Z', 3],
      ['2026-06-03T11:10:00Z', 4],
    ]);
    const d = (t: string) => `2026-06-03T${t}:00Z`;
    await inBothStates(ctx, async (state) => {
      expect
        .soft(await load([10103, 10102, 10103], d('10:00'), d('13:00')), state)
        .toEqual([
          S(10102, d('10:00'), d('11:00'), [1]),
          S(10102, d('12:00'), d('13:00'), [2]),
          S(10103, d('10:00'), d('11:00'), [3]),
          S(10103, d('11:00'), d('12:00'), [4]),
        ]);
    });
  });

  it('follows each site\'s own zone with timeZone "site" (UTC for a site without one)', async () => {
    const pairs: [string, number][] = [
      ['2026-06-10T04:00:00Z', 1],
      ['2026-06-10T06:00:00Z', 2],
      ['2026-06-10T19:00:00Z', 3],
      ['2026-06-11T01:00:00Z', 4],
    ];
    for (const id of [SENSOR, KOLKATA_SENSOR, UTC_SENSOR]) await store(id, pairs);
    const [start, end] = ['2026-06-10T00:00:00Z', '2026-06-11T12:00:00Z'];
    await inBothStates(ctx, async (state) => {
      expect
        .soft(
          await load([UTC_SENSOR, SENSOR, KOLKATA_SENSOR], start, end, {
            interval: '1d',
            timeZone: 'site',
          }),
          state,
        )
        .toEqual([
          // America/Chicago, UTC-5 in June: days start at 05:00Z.
          S(SENSOR, start, '2026-06-10T05:00:00Z', [1]),
          S(SENSOR, '2026-06-10T05:00:00Z', '2026-06-11T05:00:00Z', [2, 3, 4]),
          // Asia/Kolkata, UTC+5:30: days start at 18:30Z.
          S(KOLKATA_SENSOR, start, '2026-06-10T18:30:00Z', [1, 2]),
          S(KOLKATA_SENSOR, '2026-06-10T18:30:00Z', end, [3, 4]),
          S(UTC_SENSOR, start, '2026-06-11T00:00:00Z', [1, 2, 3]),
          S(UTC_SENSOR, '2026-06-11T00:00:00Z', end, [4]),
        ]);
      expect
        .soft(await load([KOLKATA_SENSOR], start, end, { timeZone: 'site' }), state)
        .toEqual([
          S(KOLKATA_SENSOR, '2026-06-10T03:30:00Z', '2026-06-10T04:30:00Z', [1]),
          S(KOLKATA_SENSOR, '2026-06-10T05:30:00Z', '2026-06-10T06:30:00Z', [2]),
          S(KOLKATA_SENSOR, '2026-06-10T18:30:00Z', '2026-06-10T19:30:00Z', [3]),
          S(KOLKATA_SENSOR, '2026-06-11T00:30:00Z', '2026-06-11T01:30:00Z', [4]),
        ]);
      // A named zone applies to every id, whatever its site.
      expect
        .soft(
          await load([UTC_SENSOR], start, end, { interval: '1d', timeZone: 'America/Chicago' }),
          state,
        )
        .toEqual([
          S(UTC_SENSOR, start, '2026-06-10T05:00:00Z', [1]),
          S(UTC_SENSOR, '2026-06-10T05:00:00Z', '2026-06-11T05:00:00Z', [2, 3, 4]),
        ]);
    });
  });

  it('starts hours and days on the clock of a zone 5:45 ahead of UTC (Asia/Kathmandu)', async () => {
    const d = (t: string) => `2026-07-01T${t}Z`;
    await store(SENSOR, [
      [d('10:00:00'), 1],
      [d('10:14:59'), 2],
      [d('10:15:00'), 3],
      [d('11:00:00'), 4],
      [d('18:14:00'), 5],
      [d('18:15:00'), 6],
      [d('19:00:00'), 7],
    ]);
    const [start, end] = [d('10:00:00'), d('19:30:00')];
    const zone = { timeZone: 'Asia/Kathmandu' };
    await inBothStates(ctx, async (state) => {
      expect
        .soft(await load([SENSOR], start, end, { ...zone, interval: '1h' }), state)
        .toEqual([
          S(SENSOR, start, d('10:15:00'), [1, 2]),
          S(SENSOR, d('10:15:00'), d('11:15:00'), [3, 4]),
          S(SENSOR, d('17:15:00'), d('18:15:00'), [5]),
          S(SENSOR, d('18:15:00'), d('19:15:00'), [6, 7]),
        ]);
      expect
        .soft(await load([SENSOR], start, end, { ...zone, interval: '1d' }), state)
        .toEqual([
          S(SENSOR, start, d('18:15:00'), [1, 2, 3, 4, 5]),
          S(SENSOR, d('18:15:00'), end, [6, 7]),
        ]);
    });
  });

  it('reads an IANA fixed-offset zone with its sign (Etc/GMT-3 is 3 hours ahead of UTC)', async () => {
    await store(SENSOR, [
      ['2026-06-20T20:59:00Z', 1],
      ['2026-06-20T21:00:00Z', 2],
    ]);
    const [start, end] = ['2026-06-20T12:00:00Z', '2026-06-21T12:00:00Z'];
    await inBothStates(ctx, async (state) => {
      expect
        .soft(await load([SENSOR], start, end, { interval: '1d', timeZone: 'Etc/GMT-3' }), state)
        .toEqual([
          S(SENSOR, start, '2026-06-20T21:00:00Z', [1]),
          S(SENSOR, '2026-06-20T21:00:00Z', end, [2]),
        ]);
    });
  });

  // Daylight-saving days: [log time, value] pairs, the range, the day buckets and the hour buckets.
  const DST: {
    name: string;
    zone: string;
    logs: [string, number][];
    range: [string, string];
    days: [string, string, number[]][];
    hours: [string, number[]][];
    dayHours: number;
  }[] = [
    {
      name: 'Europe/Berlin 2026-10-25 (25 h, 02:00-03:00 twice)',
      zone: 'Europe/Berlin',
      dayHours: 25,
      logs: [
        ['2026-10-24T21:59:00Z', 1],
        ['2026-10-24T22:00:00Z', 2],
        ['2026-10-25T00:30:00Z', 3],
        ['2026-10-25T01:30:00Z', 4],
        ['2026-10-25T22:59:00Z', 5],
        ['2026-10-25T23:00:00Z', 6],
      ],
      range: ['2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z'],
      days: [
        ['2026-10-24T12:00:00Z', '2026-10-24T22:00:00Z', [1]],
        ['2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z', [2, 3, 4, 5]],
        ['2026-10-25T23:00:00Z', '2026-10-26T12:00:00Z', [6]],
      ],
      hours: [
        ['2026-10-24T21:00:00Z', [1]],
        ['2026-10-24T22:00:00Z', [2]],
        ['2026-10-25T00:00:00Z', [3]],
        ['2026-10-25T01:00:00Z', [4]],
        ['2026-10-25T22:00:00Z', [5]],
        ['2026-10-25T23:00:00Z', [6]],
      ],
    },
    {
      name: 'Europe/Berlin 2026-03-29 (23 h)',
      zone: 'Europe/Berlin',
      dayHours: 23,
      logs: [
        ['2026-03-28T22:59:00Z', 1],
        ['2026-03-28T23:00:00Z', 2],
        ['2026-03-29T00:30:00Z', 3],
        ['2026-03-29T01:30:00Z', 4],
        ['2026-03-29T21:59:00Z', 5],
        ['2026-03-29T22:00:00Z', 6],
      ],
      range: ['2026-03-28T12:00:00Z', '2026-03-30T12:00:00Z'],
      days: [
        ['2026-03-28T12:00:00Z', '2026-03-28T23:00:00Z', [1]],
        ['2026-03-28T23:00:00Z', '2026-03-29T22:00:00Z', [2, 3, 4, 5]],
        ['2026-03-29T22:00:00Z', '2026-03-30T12:00:00Z', [6]],
      ],
      hours: [
        ['2026-03-28T22:00:00Z', [1]],
        ['2026-03-28T23:00:00Z', [2]],
        ['2026-03-29T00:00:00Z', [3]],
        ['2026-03-29T01:00:00Z', [4]],
        ['2026-03-29T21:00:00Z', [5]],
        ['2026-03-29T22:00:00Z', [6]],
      ],
    },
    {
      name: 'America/New_York 2026-03-08 (23 h)',
      zone: 'America/New_York',
      dayHours: 23,
      logs: [
        ['2026-03-08T04:59:00Z', 1],
        ['2026-03-08T05:00:00Z', 2],
        ['2026-03-08T06:30:00Z', 3],
        ['2026-03-08T07:30:00Z', 4],
        ['2026-03-09T03:59:00Z', 5],
        ['2026-03-09T04:00:00Z', 6],
      ],
      range: ['2026-03-07T12:00:00Z', '2026-03-09T12:00:00Z'],
      days: [
        ['2026-03-07T12:00:00Z', '2026-03-08T05:00:00Z', [1]],
        ['2026-03-08T05:00:00Z', '2026-03-09T04:00:00Z', [2, 3, 4, 5]],
        ['2026-03-09T04:00:00Z', '2026-03-09T12:00:00Z', [6]],
      ],
      hours: [
        ['2026-03-08T04:00:00Z', [1]],
        ['2026-03-08T05:00:00Z', [2]],
        ['2026-03-08T06:00:00Z', [3]],
        ['2026-03-08T07:00:00Z', [4]],
        ['2026-03-09T03:00:00Z', [5]],
        ['2026-03-09T04:00:00Z', [6]],
      ],
    },
    {
      name: 'America/New_York 2026-11-01 (25 h, 01:00-02:00 twice)',
      zone: 'America/New_York',
      dayHours: 25,
      logs: [
        ['2026-11-01T03:59:00Z', 1],
        ['2026-11-01T04:00:00Z', 2],
        ['2026-11-01T05:30:00Z', 3],
        ['2026-11-01T06:30:00Z', 4],
        ['2026-11-02T04:59:00Z', 5],
        ['2026-11-02T05:00:00Z', 6],
      ],
      range: ['2026-10-31T12:00:00Z', '2026-11-02T12:00:00Z'],
      days: [
        ['2026-10-31T12:00:00Z', '2026-11-01T04:00:00Z', [1]],
        ['2026-11-01T04:00:00Z', '2026-11-02T05:00:00Z', [2, 3, 4, 5]],
        ['2026-11-02T05:00:00Z', '2026-11-02T12:00:00Z', [6]],
      ],
      hours: [
        ['2026-11-01T03:00:00Z', [1]],
        ['2026-11-01T04:00:00Z', [2]],
        ['2026-11-01T05:00:00Z', [3]],
        ['2026-11-01T06:00:00Z', [4]],
        ['2026-11-02T04:00:00Z', [5]],
        ['2026-11-02T05:00:00Z', [6]],
      ],
    },
  ];

  it.each(DST)(
    'follows the local clock through $name',
    async ({ zone, logs, range, days, hours, dayHours }) => {
      await store(SENSOR, logs);
      const [start, end] = range;
      await inBothStates(ctx, async (state) => {
        const byDay = (await load([SENSOR], start, end, { interval: '1d', timeZone: zone })) as {
          start: string;
          end: string;
        }[];
        expect.soft(byDay, state).toEqual(days.map(([s, e, v]) => S(SENSOR, s, e, v)));
        expect(Date.parse(byDay[1].end) - Date.parse(byDay[1].start)).toBe(dayHours * H);
        expect
          .soft(await load([SENSOR], start, end, { interval: '1h', timeZone: zone }), state)
          .toEqual(
            hours.map(([s, v]) => S(SENSOR, s, new Date(Date.parse(s) + H).toISOString(), v)),
          );
        expect
          .soft(await load([SENSOR], start, end, { interval: 'all', timeZone: zone }), state)
          .toEqual([S(SENSOR, start, end, [1, 2, 3, 4, 5, 6])]);
      });
    },
  );
});
