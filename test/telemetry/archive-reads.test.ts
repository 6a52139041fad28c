import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Access } from '../../src/auth/access.js';
import { daysTable, moveDaySql, restoreDaysSql } from '../../src/telemetry/archive/days.js';
import { moveRollupsSql } from '../../src/telemetry/archive/rollup-days.js';
import { openRawSensorLogs } from '../../src/telemetry/download/raw.js';
import type { TelemetryKind } from '../../src/telemetry/kinds.js';
import { refreshAll } from '../../src/telemetry/rollups/refresh.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { count, METER, PUMP, SENSOR, SENSOR_2, TANK } from './fixtures.js';
import { LOAD_URL, RAW_URL, storeLogs } from './download-fixtures.js';
import { expectSameText } from './archive-fixtures.js';
import { random } from '../../src/random.js';

// The downloads read archived days (archive/days.ts) as the rows they were: two databases get the
// same logs and the same rollups, then some whole days of every equipment are moved into the
// archive in one of them (days without stale marks, as the archive pass moves them), and every read
// path answers both with the very same bytes: raw logs, event- and time-weighted summaries,
// interpolated values and plot values, over ranges cut anywhere, inside archived days too.

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const D0 = Date.UTC(2025, 9, 20);
const iso = (t: number) => new Date(t).toISOString();
/** The days archived: D1, D2 and D4 (D0, D3 and D5 stay rows). */
const ARCHIVED = [1, 2, 4];

/** The same logs for both databases: every kind, days of grids, irregular times, gaps and nulls. */
function series() {
  const r = random(7);
  const decimal = () => Math.round((r() - 0.3) * 100_000) / 100;
  const anyDouble = () => (r() - 0.5) * 1e6 * r();
  const sensor: Record<string, unknown>[] = [];
  const push = (id: number, t: number, value: number) =>
    sensor.push({ sensorID: id, timestamp: iso(t), value });
  // D0: a minute apart, milliseconds off; D1: a grid of minutes from 00:00:30; D2: every 10 s
  // (more than a page of raw logs); D3: three logs; D4: 500 at random times; D5: 2 min, till noon.
  for (let k = 0; k < 1440; k++) push(SENSOR, D0 + k * MIN + Math.floor(r() * 1000), decimal());
  for (let k = 0; k < 1440; k++) push(SENSOR, D0 + DAY + 30_000 + k * MIN, decimal());
  for (let k = 0; k < 8640; k++) push(SENSOR, D0 + 2 * DAY + k * 10_000, anyDouble());
  for (const t of [5 * HOUR + 123, 12 * HOUR, DAY - 1]) push(SENSOR, D0 + 3 * DAY + t, decimal());
  const times = new Set<number>();
  while (times.size < 500) times.add(Math.floor(r() * DAY));
  for (const t of [...times]) push(SENSOR, D0 + 4 * DAY + t, r() < 0.5 ? decimal() : anyDouble());
  for (let k = 0; k < 360; k++) push(SENSOR, D0 + 5 * DAY + k * 2 * MIN, decimal());
  // The stepped sensor: about hourly, none on D2 (an empty day between archived ones).
  for (let d = 0; d < 6; d++) {
    if (d === 2) continue;
    for (let h = 0; h < 24; h++)
      if (r() < 0.8) push(SENSOR_2, D0 + d * DAY + h * HOUR + Math.floor(r() * HOUR), h % 3);
  }
  const meter: Record<string, unknown>[] = [];
  let total = 1000;
  for (let k = 0; k < 6 * 288; k++) {
    total = k === 400 ? 5 : total + Math.round(r() * 1000) / 100; // a counter reset on D1
    meter.push({
      flowMeterID: METER,
      timestamp: iso(D0 + k * 5 * MIN + (k % 7) * 1001),
      ...(r() < 0.9 ? { totalVolume: total } : {}),
      ...(r() < 0.8 ? { flowRate: decimal() } : {}),
      ...(r() < 0.7 ? { pressure: anyDouble() } : {}),
      ...(r() < 0.5 ? { dayVolume: decimal() } : {}),
      ...(k % 288 === 3 ? { startTimestamp: iso(D0 + Math.floor(k / 288) * DAY) } : {}),
    });
  }
  const pump: Record<string, unknown>[] = [];
  for (let k = 0; k < 6 * 144; k++)
    pump.push({
      sitePumpID: PUMP,
      timestamp: iso(D0 + k * 10 * MIN + Math.floor(r() * 60_000)),
      ...(r() < 0.9 ? { running: r() < 0.6 } : {}),
      ...(r() < 0.8 ? { frequency: decimal() } : {}),
      ...(r() < 0.8 ? { pressure: decimal() } : {}),
      ...(r() < 0.3 ? { statusID: Math.floor(r() * 5), status: `s${Math.floor(r() * 5)}` } : {}),
    });
  const tank: Record<string, unknown>[] = [];
  for (let k = 0; k < 6 * 96; k++)
    tank.push({
      siteTankGroupID: TANK,
      timestamp: iso(D0 + k * 15 * MIN + Math.floor(r() * 600_000)),
      ...(r() < 0.9 ? { entryTankLevel: decimal() } : {}),
      ...(r() < 0.8 ? { exitTankLevel: anyDouble() } : {}),
      ...(r() < 0.5 ? { totalVolume: decimal() } : {}),
    });
  return { sensor, meter, pump, tank };
}

const IDS: Record<TelemetryKind, number[]> = {
  sensor: [SENSOR, SENSOR_2],
  meter: [METER],
  pump: [PUMP],
  tank: [TANK],
};
const IDS_FIELD: Record<TelemetryKind, string> = {
  sensor: 'sensorIds',
  meter: 'meterIds',
  pump: 'pumpIds',
  tank: 'tankGroupIds',
};

/** Ranges cut inside days, archived ones and rows alike, and whole days. */
const RANGES: [number, number][] = [
  [D0 + 7 * HOUR + 7 * MIN + 13_500, D0 + 5 * DAY + 10 * HOUR + 43 * MIN + 1_250],
  [D0 + DAY, D0 + 3 * DAY],
  [D0 + DAY + 13 * HOUR + 13 * MIN + 13_013, D0 + 2 * DAY + 8 * HOUR + 8 * MIN + 8_008],
  [D0 + 2 * DAY + 23 * HOUR + 50 * MIN, D0 + 4 * DAY + 10 * MIN],
  [D0 + 4 * DAY + 12 * HOUR + 1, D0 + 4 * DAY + 12 * HOUR + 30 * MIN],
  [D0 - DAY, D0 + 7 * DAY],
];

describeEachBackend('archived days read as rows', (backend) => {
  /** `rows` keeps every log as a row; `archive` has days D1, D2 and D4 archived. */
  let rows: TestContext;
  let archive: TestContext;
  const tokens = new Map<TestContext, string>();

  beforeAll(async () => {
    const data = series();
    for (const which of ['rows', 'archive'] as const) {
      const ctx = await startApp(backend, { settings: { ROLLUP_REFRESH_MS: 0 } });
      if (which === 'rows') rows = ctx;
      else archive = ctx;
      const token = await ctx.token('*');
      tokens.set(ctx, token);
      await ctx.db.query(`UPDATE sensors SET step = true WHERE sensor_id = $1`, [SENSOR_2]);
      for (const kind of ['sensor', 'meter', 'pump', 'tank'] as const)
        expect(await storeLogs(ctx, token, kind, data[kind])).toBe(data[kind].length);
      await refreshAll(ctx.db);
      expect(await count(ctx.db, 'rollup_dirty')).toBe(0);
    }
    // Archived as the pass archives: whole UTC days without marks, their quarters and hours too.
    for (const kind of ['sensor', 'meter', 'pump', 'tank'] as const)
      for (const d of ARCHIVED) {
        const moved = await archive.db.query<{ id: number }>(moveDaySql(kind), [
          IDS[kind],
          iso(D0 + d * DAY),
          iso(D0 + (d + 1) * DAY),
        ]);
        expect(moved.length).toBe(d === 2 && kind === 'sensor' ? 1 : IDS[kind].length);
        // The day's quarters and hours with them (archive/rollup-days.ts).
        const [units] = await archive.db.query<{ n: number }>(moveRollupsSql(kind), [
          moved.map((m) => m.id),
          iso(D0 + d * DAY),
          iso(D0 + (d + 1) * DAY),
        ]);
        expect(units.n).toBeGreaterThan(0);
      }
    expect(
      await count(archive.db, 'sensor_logs', 'ts >= $1 AND ts < $2', [
        iso(D0 + DAY),
        iso(D0 + 3 * DAY),
      ]),
    ).toBe(0);
    expect(await count(archive.db, daysTable('meter'))).toBe(3);
  }, 600_000);
  afterAll(async () => {
    await rows?.close();
    await archive?.close();
  });

  const ask = async (
    ctx: TestContext,
    url: string,
    body: Record<string, unknown>,
    accept = 'application/json',
  ) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(tokens.get(ctx)!), 'content-type': 'application/json', accept },
      payload: body,
    });
    return { status: res.statusCode, body: res.body };
  };
  /** Asks both databases; the answers must be the same bytes. Returns the body. */
  const same = async (url: string, body: Record<string, unknown>, accept?: string) => {
    const a = await ask(rows, url, body, accept);
    const b = await ask(archive, url, body, accept);
    expect(a.status, a.body.slice(0, 300)).toBe(200);
    expect(b.status, b.body.slice(0, 300)).toBe(200);
    expectSameText(b.body, a.body, `${url} ${JSON.stringify(body)} ${accept ?? ''}`);
    return a.body;
  };

  it('raw logs, JSON and CSV, paged across rows and archived days', async () => {
    for (const [start, end] of RANGES)
      for (const id of IDS.sensor)
        for (const accept of ['application/json', 'text/csv']) {
          const body = await same(
            RAW_URL,
            { sensorId: id, start: iso(start), end: iso(end) },
            accept,
          );
          if (id === SENSOR && end - start > HOUR) expect(body.length).toBeGreaterThan(1000);
        }
    // The whole of D2, archived, is more than a page (5,000 logs): every log once, in order.
    const all = JSON.parse(
      await same(RAW_URL, { sensorId: SENSOR, start: iso(D0 + 2 * DAY), end: iso(D0 + 3 * DAY) }),
    ) as { timestamp: string }[];
    expect(all.length).toBe(8640);
    expect(all.every((x, k) => x.timestamp === iso(D0 + 2 * DAY + k * 10_000))).toBe(true);
  });

  it('raw logs: a day moved back to rows after the download opened is read from its rows', async () => {
    const everything = new Access({
      clientId: 'reads',
      siteIds: null,
      cameraIds: null,
      admin: false,
      role: 'full',
      disabled: false,
    });
    const body = { sensorId: SENSOR, start: iso(D0 + DAY - HOUR), end: iso(D0 + 2 * DAY + HOUR) };
    const text = async (ctx: TestContext, moveBack: boolean) => {
      // The spans are made when the download opens (D1 archived: a span of archived days); its pages
      // are read once it is read.
      const download = await openRawSensorLogs(ctx.db, everything, body, 'csv');
      if (moveBack)
        expect(await ctx.db.query(restoreDaysSql('sensor'), [[SENSOR], [iso(D0 + DAY)]])).toEqual([
          { n: 1440, units: 96 + 24 },
        ]);
      const pages: string[] = [];
      for await (const page of { [Symbol.asyncIterator]: () => download.pages })
        pages.push((page as { text: string }).text);
      return pages.join('\r\n');
    };
    const expected = await text(rows, false);
    expect(expected.split('\r\n').length).toBe(60 + 1440 + 360);
    try {
      expect(await text(archive, true)).toBe(expected);
    } finally {
      // Archived again, as the other tests expect it.
      expect(
        await archive.db.query(moveDaySql('sensor'), [[SENSOR], iso(D0 + DAY), iso(D0 + 2 * DAY)]),
      ).toEqual([{ id: SENSOR, n: 1440 }]);
      expect(
        await archive.db.query(moveRollupsSql('sensor'), [
          [SENSOR],
          iso(D0 + DAY),
          iso(D0 + 2 * DAY),
        ]),
      ).toEqual([{ n: 96 + 24 }]);
    }
  });

  it('event- and time-weighted summaries of every kind: 15m, 1h, 1d, all, in UTC and on other clocks', async () => {
    let elements = 0;
    for (const [start, end] of RANGES)
      for (const kind of ['sensor', 'meter', 'pump', 'tank'] as const)
        for (const interval of ['15m', '1h', '1d', 'all'])
          for (const timeZone of ['UTC', 'Europe/Berlin', 'Asia/Kathmandu'])
            for (const calculationBasis of ['eventWeighted', 'timeWeighted']) {
              const body = {
                [IDS_FIELD[kind]]: IDS[kind],
                start: iso(start),
                end: iso(end),
                interval,
                timeZone,
                calculationBasis,
              };
              elements += (JSON.parse(await same(LOAD_URL[kind], body)) as unknown[]).length;
            }
    expect(elements).toBeGreaterThan(1000);
    // CSV too.
    for (const kind of ['sensor', 'meter'] as const)
      await same(
        LOAD_URL[kind],
        {
          [IDS_FIELD[kind]]: IDS[kind],
          start: iso(RANGES[0][0]),
          end: iso(RANGES[0][1]),
          interval: '1h',
          calculationBasis: 'timeWeighted',
        },
        'text/csv',
      );
  }, 180_000);

  it('interpolated values: grids and given times, linear and stepped', async () => {
    for (const [start, end] of RANGES)
      for (const interval of ['15m', '1h', '1d'])
        for (const timeZone of ['UTC', 'Asia/Kathmandu']) {
          const body = {
            sensorIds: IDS.sensor,
            start: iso(start),
            end: iso(end),
            interval,
            timeZone,
          };
          await same('/v1/sensors/logs/interpolated', body);
        }
    // Instants at logs, between them, at day edges, in the empty day, before the first and after the last.
    const times = [
      D0 - 1,
      D0 + DAY - 1,
      D0 + DAY,
      D0 + DAY + 30_000,
      D0 + DAY + 30_001,
      D0 + DAY + 29_999,
      D0 + 2 * DAY - 1,
      D0 + 2 * DAY + 5,
      D0 + 2 * DAY + 12 * HOUR + 10_000,
      D0 + 3 * DAY,
      D0 + 3 * DAY + 5 * HOUR + 123,
      D0 + 4 * DAY + 7 * HOUR,
      D0 + 5 * DAY - 1,
      D0 + 5 * DAY,
      D0 + 9 * DAY,
    ];
    const answer = JSON.parse(
      await same('/v1/sensors/logs/interpolated', { sensorIds: IDS.sensor, times: times.map(iso) }),
    ) as { value: number | null }[];
    expect(answer.filter((v) => v.value !== null).length).toBeGreaterThan(10);
  });

  it('plot values', async () => {
    for (const [start, end] of RANGES)
      for (const id of IDS.sensor)
        for (const intervals of [1, 7, 50, 500]) {
          const body = { sensorId: id, start: iso(start), end: iso(end), intervals };
          await same('/v1/sensors/logs/plot', body);
        }
  });

  it('any range: every read path answers the same', async () => {
    const instant = fc.integer({ min: D0 - 2 * HOUR, max: D0 + 6 * DAY + 2 * HOUR });
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(instant, instant).filter(([a, b]) => a !== b),
        fc.constantFrom('15m', '1h', '1d', 'all'),
        fc.constantFrom('UTC', 'America/St_Johns', 'Asia/Kathmandu'),
        fc.constantFrom<TelemetryKind>('sensor', 'meter', 'pump', 'tank'),
        fc.integer({ min: 1, max: 300 }),
        fc.array(instant, { minLength: 1, maxLength: 20 }),
        async ([a, b], interval, timeZone, kind, intervals, times) => {
          const [start, end] = [Math.min(a, b), Math.max(a, b)];
          for (const calculationBasis of ['eventWeighted', 'timeWeighted'])
            await same(LOAD_URL[kind], {
              [IDS_FIELD[kind]]: IDS[kind],
              start: iso(start),
              end: iso(end),
              interval,
              timeZone,
              calculationBasis,
            });
          const id = intervals % 2 ? SENSOR : SENSOR_2;
          await same(RAW_URL, { sensorId: id, start: iso(start), end: iso(end) }, 'text/csv');
          await same('/v1/sensors/logs/plot', {
            sensorId: id,
            start: iso(start),
            end: iso(end),
            intervals,
          });
          await same('/v1/sensors/logs/interpolated', {
            sensorIds: IDS.sensor,
            times: times.map(iso),
          });
          if (interval !== 'all')
            await same('/v1/sensors/logs/interpolated', {
              sensorIds: IDS.sensor,
              start: iso(start),
              end: iso(end),
              interval,
              timeZone,
            });
        },
      ),
      { numRuns: 40 },
    );
  });
});
