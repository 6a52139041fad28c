import fc from 'fast-check';
import { expect, it } from 'vitest';
import { importDocument } from '../../src/provisioning/import.js';
import { generateDemo } from '../../src/provisioning/demo.js';
import { refreshAll, refreshMarked } from '../../src/telemetry/rollups/refresh.js';
import { UNITS } from '../../src/telemetry/rollups/units.js';
import { offsetMinutes } from '../../src/telemetry/download/zones.js';
import { openInterpolated } from '../../src/telemetry/download/interpolated.js';
import { logPartitions } from '../../src/telemetry/download/log-partitions.js';
import { Access } from '../../src/auth/access.js';
import type { Queryable } from '../../src/db/index.js';
import { dropMonth } from '../../src/telemetry/retention/tables.js';
import { bearer, describeEachBackend } from '../helper.js';
import { SENSOR, SENSOR_2, SITE2_SENSOR, suiteApp } from './fixtures.js';
import { parseCsv, expectError, downloader } from './download-fixtures.js';
import { lastPerTime, plotValues, stored, valueAt, type Pt } from './historian-fixtures.js';

// Interpolated values and plot values (contract 13) against a direct computation from the samples
// sent, with rollups refreshed fully, partly or not at all; every status of both routes.

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.parse('2025-10-26T00:00:00Z'); // daylight saving ends in Berlin
const INTERP = '/v1/sensors/logs/interpolated';
const PLOT = '/v1/sensors/logs/plot';
const STEP_MIN = { '1m': 1, '5m': 5, '15m': 15, '1h': 60, '1d': 1440 } as const;

describeEachBackend('historian: interpolated and plot values', (backend) => {
  const t = suiteApp(backend, { ROLLUP_REFRESH_MS: 0 });
  const iso = (ms: number) => new Date(ms).toISOString();
  const post = async (url: string, body: unknown) => {
    const res = await t.ctx.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(t.token), 'content-type': 'application/json' },
      payload: body as object,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { sensorID: number; timestamp: string; value: number | null }[];
  };
  const reset = async (id: number, step: boolean) => {
    await t.ctx.db.query(`DELETE FROM sensor_logs WHERE sensor_id = $1`, [id]);
    await t.ctx.db.query(`DELETE FROM sensor_rollups WHERE sensor_id = $1`, [id]);
    await t.ctx.db.query(`DELETE FROM rollup_dirty WHERE kind = 1 AND equipment_id = $1`, [id]);
    await t.ctx.db.query(`UPDATE sensors SET step = $2 WHERE sensor_id = $1`, [id, step]);
  };
  const upload = async (id: number, pts: Pt[]) =>
    expect(
      (
        await t.post(
          'logs/sensor/batch',
          pts.map((p) => ({ sensorID: id, timestamp: iso(p.t), value: p.v })),
        )
      ).status,
    ).toBe(201);

  it('Step comes from the provisioning document, and is not shown by the configuration routes', async () => {
    const demo = generateDemo();
    const sensor = demo.sensors.find((s) => s.SiteSensorID === SENSOR)!;
    await importDocument(t.ctx.db, { sensors: [{ ...sensor, Step: true }] });
    const [row] = await t.ctx.db.query<{ step: boolean }>(
      `SELECT step FROM sensors WHERE sensor_id = $1`,
      [SENSOR],
    );
    expect(row.step).toBe(true);
    const res = await t.ctx.app.inject({
      method: 'GET',
      url: `/v1/config/site/sensors?siteId=1`,
      headers: bearer(t.token),
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toMatch(/"step"/i);
    await reset(SENSOR, true);
    await upload(SENSOR, [
      { t: T0, v: 100 },
      { t: T0 + 59 * MIN, v: 200 },
      { t: T0 + HOUR, v: 100 },
    ]);
    const body = { sensorIds: [SENSOR], times: [iso(T0 + 30 * MIN), iso(T0 - 1), iso(T0 + HOUR)] };
    expect((await post(INTERP, body)).map((v) => v.value)).toEqual([100, null, 100]);
    await importDocument(t.ctx.db, { sensors: [{ ...sensor, Step: false }] });
    expect((await post(INTERP, body)).map((v) => v.value)).toEqual([
      100 + (100 * 30) / 59,
      null,
      100,
    ]);
  });

  const scenario = fc.record({
    step: fc.boolean(),
    samples: fc.array(
      fc.tuple(
        fc.oneof(
          fc.integer({ min: -4, max: 200 }).map((q) => q * 15 * MIN),
          fc.integer({ min: -60 * HOUR, max: 60 * HOUR }),
        ),
        fc.integer({ min: -500, max: 500 }),
      ),
      { minLength: 1, maxLength: 30 },
    ),
    refresh: fc.constantFrom('none', 'all', 'some'),
    times: fc.array(fc.integer({ min: -70 * HOUR, max: 70 * HOUR }), {
      minLength: 1,
      maxLength: 20,
    }),
    grid: fc.record({
      from: fc.integer({ min: -70 * 60, max: 60 * 60 }),
      length: fc.integer({ min: 1, max: 48 * 60 }),
      ms: fc.integer({ min: 0, max: 59_999 }),
      interval: fc.constantFrom('1m', '5m', '15m', '1h', '1d'),
      zone: fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kathmandu'),
    }),
    plot: fc.record({
      from: fc.integer({ min: -70 * HOUR, max: 60 * HOUR }),
      length: fc.integer({ min: 1, max: 100 * HOUR }),
      intervals: fc.integer({ min: 1, max: 40 }),
    }),
  });

  it('for random series: interpolated values at times and on grids, and plot values, against a direct computation', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        await reset(SENSOR_2, s.step);
        const sent = s.samples.map(([o, v]) => ({ t: T0 + o, v }));
        const half = Math.ceil(sent.length / 2);
        const later = lastPerTime(sent.slice(half));
        const earlier = lastPerTime(sent.slice(0, half));
        await upload(SENSOR_2, later); // later records first
        if (s.refresh === 'all') await refreshAll(t.ctx.db);
        await upload(SENSOR_2, earlier);
        if (s.refresh === 'some') await refreshMarked(t.ctx.db, UNITS.sensor, 3);
        if (s.refresh === 'all') await refreshAll(t.ctx.db);
        const series = stored([...later, ...earlier]);
        const what = `series ${JSON.stringify(series)} step ${s.step}`;

        // Times, in the order given.
        const times = s.times.map((o) => T0 + o);
        const atTimes = await post(INTERP, { sensorIds: [SENSOR_2], times: times.map(iso) });
        expect(
          atTimes.map((v) => [v.timestamp, v.value]),
          what,
        ).toEqual(times.map((x) => [iso(x), valueAt(series, x, s.step)]));

        // A grid on a zone's clock.
        const g = s.grid;
        const start = T0 + g.from * MIN + g.ms;
        const end = start + g.length * MIN;
        const step = STEP_MIN[g.interval];
        const want: number[] = [];
        for (let m = Math.ceil(start / MIN); m * MIN <= end; m++) {
          const local = m + offsetMinutes(g.zone, m * MIN);
          if (((local % step) + step) % step === 0) want.push(m * MIN);
        }
        const grid = await post(INTERP, {
          sensorIds: [SENSOR_2],
          start: iso(start),
          end: iso(end),
          interval: g.interval,
          timeZone: g.zone,
        });
        expect(
          grid.map((v) => [v.timestamp, v.value]),
          `${what} ${JSON.stringify(g)}`,
        ).toEqual(want.map((x) => [iso(x), valueAt(series, x, s.step)]));

        // Plot values.
        const p = s.plot;
        const ps = T0 + p.from;
        const plot = await post(PLOT, {
          sensorId: SENSOR_2,
          start: iso(ps),
          end: iso(ps + p.length),
          intervals: p.intervals,
        });
        expect(
          plot.map((v) => [v.timestamp, v.value]),
          `${what} ${JSON.stringify(p)}`,
        ).toEqual(plotValues(series, ps, ps + p.length, p.intervals).map((x) => [iso(x.t), x.v]));
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 40) },
    );
  }, 300_000);

  it('reads each instant in the partition that holds it: samples and instants around the start of a month', async () => {
    const parts = await logPartitions(t.ctx.db);
    // The partitions cover every time once, in order, the archive first.
    expect(parts[0].table).toBe('sensor_logs_archive');
    expect(parts[0].from).toBe(-Infinity);
    for (let i = 1; i < parts.length; i++) expect(parts[i].from).toBe(parts[i - 1].to);
    expect(parts.length).toBeGreaterThan(2);
    // The archive's end, a month's start before now: samples on both sides of it, and more than a
    // day before and after, so that both the bounded lookups and the fallbacks are needed.
    const b = parts[0].to;
    expect(b).toBeLessThan(Date.now());
    await reset(SENSOR_2, false);
    const series = [
      { t: b - 3 * 24 * HOUR, v: 1 },
      { t: b - 90 * MIN, v: 4 },
      { t: b - MIN, v: -2 },
      { t: b + 20 * MIN, v: 8 },
      { t: b + 26 * HOUR, v: 3 },
      { t: Math.min(b + 50 * HOUR, Date.now() - HOUR), v: 5 },
    ];
    await upload(SENSOR_2, series);
    const offsets = [-4 * 24, -2 * 24, -1, -1 / 60, -1 / 3600000, 0, 1 / 3600000, 0.25, 1, 25, 27];
    const times = offsets.map((h) => b + Math.round(h * HOUR));
    for (const step of [false, true]) {
      await t.ctx.db.query(`UPDATE sensors SET step = $2 WHERE sensor_id = $1`, [SENSOR_2, step]);
      const got = await post(INTERP, { sensorIds: [SENSOR_2], times: times.map(iso) });
      expect(got.map((v) => [v.timestamp, v.value])).toEqual(
        times.map((x) => [iso(x), valueAt(series, x, step)]),
      );
      // A one-minute grid across the boundary.
      const grid = await post(INTERP, {
        sensorIds: [SENSOR_2],
        start: iso(b - 3 * MIN),
        end: iso(b + 3 * MIN),
        interval: '1m',
      });
      expect(grid.map((v) => v.value)).toEqual(
        [-3, -2, -1, 0, 1, 2, 3].map((m) => valueAt(series, b + m * MIN, step)),
      );
    }
  });

  it('values read from a window of logs around each time, where it holds the samples and where it does not', async () => {
    // A burst of 100 samples a second apart, and a few samples hours away: the daily rollups make
    // the window about two hours wide, so around the burst it is full (its first 32 rows may all lie
    // before t, and it is not used), and between the others it holds none on one side (a gap).
    await reset(SENSOR_2, false);
    const burst = Array.from({ length: 100 }, (_, i) => ({ t: T0 + i * 1000, v: (i * 7) % 13 }));
    const series = [
      { t: T0 - 30 * HOUR, v: 1 },
      ...burst,
      { t: T0 + 5 * HOUR, v: 9 },
      { t: T0 + 5 * HOUR + 10 * MIN, v: 3 },
      { t: T0 + 40 * HOUR, v: 6 },
    ];
    await upload(SENSOR_2, series);
    await refreshAll(t.ctx.db);
    const offsets = [-31 * HOUR, -10 * HOUR, -1, 0, 1500, 50_000, 99_000, 99_001, 2 * HOUR];
    const more = [5 * HOUR + 5 * MIN, 5 * HOUR + 10 * MIN, 20 * HOUR, 40 * HOUR, 41 * HOUR];
    const times = [...offsets, ...more].map((o) => T0 + o);
    for (const step of [false, true]) {
      await t.ctx.db.query(`UPDATE sensors SET step = $2 WHERE sensor_id = $1`, [SENSOR_2, step]);
      const got = await post(INTERP, { sensorIds: [SENSOR_2], times: times.map(iso) });
      expect(got.map((v) => [v.timestamp, v.value])).toEqual(
        times.map((x) => [iso(x), valueAt(series, x, step)]),
      );
    }
  });

  it('times at the ends of the calendar: values or null, never an error', async () => {
    await reset(SENSOR_2, false);
    await upload(SENSOR_2, [
      { t: T0, v: 2 },
      { t: T0 + HOUR, v: 6 },
    ]);
    await refreshAll(t.ctx.db);
    const times = ['0001-01-01T00:00:00Z', iso(T0 + 30 * MIN), '9999-12-31T23:59:59.999Z'];
    const got = await post(INTERP, { sensorIds: [SENSOR_2], times });
    expect(got.map((v) => v.value)).toEqual([null, 4, null]);
  });

  it('a month dropped after the partitions were listed: the values come through the partitioned table', async () => {
    const parts = await logPartitions(t.ctx.db);
    const last = parts[parts.length - 1];
    await reset(SENSOR_2, false);
    const series = [
      { t: T0, v: 2 },
      { t: T0 + HOUR, v: 6 },
    ];
    await upload(SENSOR_2, series);
    let listed = false;
    // The month is dropped right after the catalogue was read, as a retention pass drops one.
    const racing: Queryable = {
      query: async (sql, params, opts) => {
        const rows = await t.ctx.db.query(sql, params, opts);
        if (!listed && sql.includes('telemetry_months')) {
          listed = true;
          await t.ctx.db.transaction((tx) => dropMonth(tx, last.from));
        }
        return rows as never;
      },
    };
    const access = new Access({ clientId: 'test', siteIds: null, cameraIds: null } as never);
    const times = [T0 + 30 * MIN, last.from + HOUR];
    try {
      const { pages } = await openInterpolated(racing, access, {
        sensorIds: [SENSOR_2],
        times: times.map(iso),
      });
      const values: unknown[] = [];
      for (let p = await pages.next(); !p.done; p = await pages.next())
        values.push(...(p.value as unknown[]));
      expect(listed).toBe(true);
      expect(values).toEqual([
        [SENSOR_2, iso(times[0]), 4],
        [SENSOR_2, iso(times[1]), null],
      ]);
    } finally {
      // The month again, as the service would create it.
      await t.ctx.db.query(`SELECT ensure_telemetry_partitions($1::timestamptz)`, [
        iso(last.from + HOUR),
      ]);
      expect((await logPartitions(t.ctx.db)).map((p) => p.table)).toEqual(
        parts.map((p) => p.table),
      );
    }
  });

  it('answers CSV when asked', async () => {
    const get = downloader(t.ctx, t.token);
    const a = await get(
      PLOT,
      { sensorId: SENSOR, start: iso(T0), end: iso(T0 + HOUR), intervals: 2 },
      { accept: 'text/csv' },
    );
    expect(a.status).toBe(200);
    expect(a.type).toMatch(/^text\/csv/);
    expect(parseCsv(a.text)[0]).toEqual(['sensorID', 'timestamp', 'value']);
    const b = await get(INTERP, { sensorIds: [SENSOR], times: [iso(T0)] }, { accept: 'text/csv' });
    expect(parseCsv(b.text)).toEqual([
      ['sensorID', 'timestamp', 'value'],
      [String(SENSOR), iso(T0), '100'],
    ]);
  });

  it('statuses: 400, 401, 403, 404', async () => {
    const get = downloader(t.ctx, t.token);
    const range = { start: iso(T0), end: iso(T0 + HOUR) };
    const bad: [string, unknown][] = [
      [INTERP, { sensorIds: [SENSOR], ...range, interval: '1h', times: [iso(T0)] }],
      [INTERP, { sensorIds: [SENSOR], ...range }],
      [INTERP, { sensorIds: [SENSOR], times: [iso(T0)], ...range }],
      [INTERP, { sensorIds: [SENSOR], interval: '1h', start: iso(T0) }],
      [INTERP, { sensorIds: [SENSOR], times: ['yesterday'] }],
      [INTERP, { sensorIds: [SENSOR], times: [] }],
      [INTERP, { sensorIds: [], times: [iso(T0)] }],
      [INTERP, { sensorIds: [SENSOR], ...range, interval: '2m' }],
      [INTERP, { sensorIds: [SENSOR], ...range, interval: '1h', timeZone: 'Mars/Olympus' }],
      [
        INTERP,
        { sensorIds: [SENSOR], start: iso(T0), end: iso(T0 + 367 * 24 * HOUR), interval: '1d' },
      ],
      [
        INTERP,
        { sensorIds: [SENSOR], start: iso(T0), end: iso(T0 + 100 * 24 * HOUR), interval: '1m' },
      ],
      [INTERP, { sensorIds: [SENSOR], start: iso(T0 + HOUR), end: iso(T0), interval: '1h' }],
      [PLOT, { sensorId: SENSOR, ...range, intervals: 0 }],
      [PLOT, { sensorId: SENSOR, ...range, intervals: 2001 }],
      [PLOT, { sensorId: SENSOR, ...range }],
      [PLOT, { sensorId: SENSOR, start: iso(T0), end: iso(T0 + 367 * 24 * HOUR), intervals: 5 }],
      [PLOT, { sensorId: SENSOR, start: 'soon', end: iso(T0), intervals: 5 }],
    ];
    for (const [url, body] of bad) expectError(await get(url, body), 400, 'Bad Request');
    const many = Array.from({ length: 100 }, (_, i) => SENSOR + i);
    expectError(
      await get(INTERP, { sensorIds: many, times: Array(1001).fill(iso(T0)) }),
      400,
      'Bad Request',
    );
    for (const [url, body] of [
      [INTERP, { sensorIds: [SENSOR], times: [iso(T0)] }],
      [PLOT, { sensorId: SENSOR, ...range, intervals: 5 }],
    ] as const) {
      expectError(await downloader(t.ctx, null)(url, body), 401, 'Unauthorized');
    }
    const siteOne = await t.ctx.token([1]);
    const one = downloader(t.ctx, siteOne);
    expectError(
      await one(INTERP, { sensorIds: [SENSOR, SITE2_SENSOR], times: [iso(T0)] }),
      403,
      'Forbidden',
    );
    expectError(
      await one(PLOT, { sensorId: SITE2_SENSOR, ...range, intervals: 5 }),
      403,
      'Forbidden',
    );
    expectError(await one(INTERP, { sensorIds: [999_999], times: [iso(T0)] }), 404, 'Not Found');
    expectError(await one(PLOT, { sensorId: 999_999, ...range, intervals: 5 }), 404, 'Not Found');
    // 404 before 403: the same answer to every client.
    expectError(
      await one(INTERP, { sensorIds: [SITE2_SENSOR, 999_999], times: [iso(T0)] }),
      404,
      'Not Found',
    );
  });
});
