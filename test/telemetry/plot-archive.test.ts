import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { moveDaySql } from '../../src/telemetry/archive/days.js';
import { moveRollupsSql, rollupDaysTable } from '../../src/telemetry/archive/rollup-days.js';
import { refreshAll } from '../../src/telemetry/rollups/refresh.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { count, SENSOR, SENSOR_2 } from './fixtures.js';
import { storeLogs } from './download-fixtures.js';
import { random } from '../../src/random.js';

// Plot values over archived days read slices of them (archive/slices.ts): the logs of a part's
// edges and the quarters and hours inside it, each archive row decompressed once. Two databases get
// the same logs and rollups; in one, some whole days are moved into the archive as the pass moves
// them (logs, then the day's quarters and hours), and plot values must be the same bytes in both,
// for ranges cut anywhere and any number of parts.

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const D0 = Date.UTC(2025, 9, 20);
const iso = (t: number) => new Date(t).toISOString();
/** The days archived: D1, D2 and D4 (D0, D3 and D5 stay rows). */
const ARCHIVED = [1, 2, 4];
const URL = '/v1/sensors/logs/plot';

/**
 * Days of grids (every quarter and hour: archive rows without bucket places), irregular times,
 * equal values, and a sensor about hourly (quarters missing: rows with places).
 */
function series() {
  const r = random(11);
  const decimal = () => Math.round((r() - 0.3) * 1_000) / 10;
  const anyDouble = () => (r() - 0.5) * 1e6 * r();
  const logs: Record<string, unknown>[] = [];
  const push = (id: number, t: number, value: number) =>
    logs.push({ sensorID: id, timestamp: iso(t), value });
  // D0: a minute apart, milliseconds off; D1: a grid of minutes from 00:00:30; D2: every 30 s, few
  // values (ties of lowest and highest); D3: three logs; D4: 500 at random times; D5: till noon.
  for (let k = 0; k < 1440; k++) push(SENSOR, D0 + k * MIN + Math.floor(r() * 1000), decimal());
  for (let k = 0; k < 1440; k++) push(SENSOR, D0 + DAY + 30_000 + k * MIN, decimal());
  for (let k = 0; k < 2880; k++) push(SENSOR, D0 + 2 * DAY + k * 30_000, Math.floor(r() * 4));
  for (const t of [5 * HOUR + 123, 12 * HOUR, DAY - 1]) push(SENSOR, D0 + 3 * DAY + t, decimal());
  const times = new Set<number>();
  while (times.size < 500) times.add(Math.floor(r() * DAY));
  for (const t of [...times]) push(SENSOR, D0 + 4 * DAY + t, r() < 0.5 ? decimal() : anyDouble());
  for (let k = 0; k < 360; k++) push(SENSOR, D0 + 5 * DAY + k * 2 * MIN, decimal());
  // About hourly, none on D2 (an empty day between archived ones), one on D4.
  for (let d = 0; d < 6; d++) {
    if (d === 2) continue;
    if (d === 4) {
      push(SENSOR_2, D0 + d * DAY + 7 * HOUR + 7 * MIN, 1);
      continue;
    }
    for (let h = 0; h < 24; h++)
      if (r() < 0.8) push(SENSOR_2, D0 + d * DAY + h * HOUR + Math.floor(r() * HOUR), h % 3);
  }
  return logs;
}

/** Ranges cut inside days, archived ones and rows alike, and whole days. */
const RANGES: [number, number][] = [
  [D0 + 7 * HOUR + 7 * MIN + 13_500, D0 + 5 * DAY + 10 * HOUR + 43 * MIN + 1_250],
  [D0 + DAY, D0 + 3 * DAY],
  [D0 + DAY + 13 * HOUR + 13 * MIN + 13_013, D0 + 2 * DAY + 8 * HOUR + 8 * MIN + 8_008],
  [D0 + 2 * DAY + 23 * HOUR + 50 * MIN, D0 + 4 * DAY + 10 * MIN],
  [D0 + 4 * DAY + 12 * HOUR + 1, D0 + 4 * DAY + 12 * HOUR + 30 * MIN],
  [D0 + DAY + 30_000, D0 + DAY + 90_001],
  [D0 - DAY, D0 + 7 * DAY],
];

describeEachBackend('plot values over archived days', (backend) => {
  /** `rows` keeps every log and rollup as a row; `archive` has days D1, D2 and D4 archived. */
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
      expect(await storeLogs(ctx, token, 'sensor', data)).toBe(data.length);
      await refreshAll(ctx.db);
      expect(await count(ctx.db, 'rollup_dirty')).toBe(0);
    }
    for (const d of ARCHIVED) {
      const day = [iso(D0 + d * DAY), iso(D0 + (d + 1) * DAY)];
      const moved = await archive.db.query<{ id: number }>(moveDaySql('sensor'), [
        [SENSOR, SENSOR_2],
        ...day,
      ]);
      expect(moved.length).toBe(d === 2 ? 1 : 2);
      await archive.db.query(moveRollupsSql('sensor'), [moved.map((m) => m.id), ...day]);
    }
    const archivedRange = [iso(D0 + DAY), iso(D0 + 3 * DAY)];
    expect(
      await count(
        archive.db,
        'sensor_rollups',
        'level IN (15, 60) AND bucket >= $1 AND bucket < $2',
        archivedRange,
      ),
    ).toBe(0);
    // Every level of every archived day; SENSOR_2's of D4 hold one quarter and one hour.
    expect(await count(archive.db, rollupDaysTable('sensor'))).toBe(2 * 5);
    expect(await count(archive.db, rollupDaysTable('sensor'), 'b IS NOT NULL')).toBeGreaterThan(0);
    expect(await count(archive.db, rollupDaysTable('sensor'), 'b IS NULL')).toBeGreaterThan(0);
  }, 600_000);
  afterAll(async () => {
    await rows?.close();
    await archive?.close();
  });

  const ask = async (ctx: TestContext, body: Record<string, unknown>) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: URL,
      headers: { ...bearer(tokens.get(ctx)!), 'content-type': 'application/json' },
      payload: body,
    });
    return { status: res.statusCode, body: res.body };
  };
  /** Asks both databases; the answers must be the same bytes. Returns the records. */
  const same = async (body: Record<string, unknown>) => {
    const a = await ask(rows, body);
    const b = await ask(archive, body);
    expect(a.status, a.body.slice(0, 300)).toBe(200);
    expect(b.status, b.body.slice(0, 300)).toBe(200);
    expect(b.body, JSON.stringify(body)).toBe(a.body);
    return JSON.parse(a.body) as unknown[];
  };

  it('ranges cut anywhere, in 1 to 2,000 parts', async () => {
    let records = 0;
    for (const [start, end] of RANGES)
      for (const sensorId of [SENSOR, SENSOR_2])
        for (const intervals of [1, 7, 50, 333, 2000])
          records += (await same({ sensorId, start: iso(start), end: iso(end), intervals })).length;
    expect(records).toBeGreaterThan(5_000);
  });

  it('any range: the same bytes as over rows', async () => {
    const instant = fc.integer({ min: D0 - 2 * HOUR, max: D0 + 6 * DAY + 2 * HOUR });
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(instant, instant).filter(([a, b]) => a !== b),
        fc.integer({ min: 1, max: 600 }),
        fc.constantFrom(SENSOR, SENSOR_2),
        async ([a, b], intervals, sensorId) => {
          const [start, end] = [Math.min(a, b), Math.max(a, b)];
          await same({ sensorId, start: iso(start), end: iso(end), intervals });
        },
      ),
      { numRuns: 60 },
    );
  });
});
