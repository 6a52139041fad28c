import { afterAll, beforeAll, expect, it } from 'vitest';
import { markAll } from '../../src/telemetry/rollups/refresh.js';
import { UNITS } from '../../src/telemetry/rollups/units.js';
import { describeEachBackend, startApp, type TestContext } from '../helper.js';
import { METER, PUMP, TANK } from './fixtures.js';
import { inBothStates, iso, storeLogs, summaryLoader } from './download-fixtures.js';

// The statistics of the pump, tank and meter summaries (contract 6), hand-computed, on stale buckets
// and again on refreshed rollups. Sensor statistics are checked with the buckets.

type Row = Record<string, unknown>;

describeEachBackend('telemetry download statistics', (backend) => {
  let ctx: TestContext;
  let token: string;
  let load: ReturnType<typeof summaryLoader>;
  beforeAll(async () => {
    ctx = await startApp(backend, { settings: { ROLLUP_REFRESH_MS: 0 } });
    token = await ctx.token('*');
    load = summaryLoader(ctx, token);
  });
  afterAll(async () => ctx?.close());

  const bucket = (start: string, end: string) => ({ start: iso(start), end: iso(end) });

  it('pump: running share of the samples that carry running, averages, maximum, and the latest status', async () => {
    const t = (m: string) => `2026-08-01T${m}:00Z`;
    await storeLogs(ctx, token, 'pump', [
      {
        sitePumpID: PUMP,
        timestamp: t('00:00'),
        running: true,
        frequency: 50,
        pressure: 100,
        statusID: 1,
        status: 'Running',
      },
      {
        sitePumpID: PUMP,
        timestamp: t('00:10'),
        running: false,
        frequency: 0,
        pressure: 80,
        statusID: 2,
        status: 'Stopped',
      },
      { sitePumpID: PUMP, timestamp: t('00:20'), pressure: 90, statusID: 3, status: 'Fault' },
      {
        sitePumpID: PUMP,
        timestamp: t('00:30'),
        running: true,
        frequency: 60,
        statusID: 1,
        status: 'Running',
      },
      { sitePumpID: PUMP, timestamp: t('01:00'), pressure: 70, statusID: 4, status: 'Idle' },
      { sitePumpID: PUMP, timestamp: t('02:00'), running: false },
      { sitePumpID: PUMP, timestamp: t('02:30'), running: false, statusID: 2, status: 'Stopped' },
      { sitePumpID: PUMP, timestamp: t('03:10'), running: true },
      { sitePumpID: PUMP, timestamp: t('03:20'), running: true },
    ]);
    const none = { avgFrequency: null, avgPressure: null, maxPressure: null };
    await inBothStates(ctx, async (state) => {
      expect.soft(await load('pump', [PUMP], t('00:00'), t('04:00')), state).toEqual([
        {
          sitePumpID: PUMP,
          ...bucket(t('00:00'), t('01:00')),
          count: 4,
          runningPercent: 200 / 3,
          avgFrequency: 110 / 3,
          avgPressure: 90,
          maxPressure: 100,
          lastStatusID: 1,
          lastStatus: 'Running',
        },
        {
          sitePumpID: PUMP,
          ...bucket(t('01:00'), t('02:00')),
          count: 1,
          runningPercent: null,
          avgFrequency: null,
          avgPressure: 70,
          maxPressure: 70,
          lastStatusID: 4,
          lastStatus: 'Idle',
        },
        {
          sitePumpID: PUMP,
          ...bucket(t('02:00'), t('03:00')),
          count: 2,
          runningPercent: 0,
          ...none,
          lastStatusID: 2,
          lastStatus: 'Stopped',
        },
        // The latest sample carries no status: the bucket's last status is null.
        {
          sitePumpID: PUMP,
          ...bucket(t('03:00'), t('04:00')),
          count: 2,
          runningPercent: 100,
          ...none,
          lastStatusID: null,
          lastStatus: null,
        },
      ]);
      // 2 of the 5 samples that carry running are true.
      expect
        .soft(await load('pump', [PUMP], t('00:00'), t('03:00'), { interval: 'all' }), state)
        .toEqual([
          {
            sitePumpID: PUMP,
            ...bucket(t('00:00'), t('03:00')),
            count: 7,
            runningPercent: (100 * 2) / 5,
            avgFrequency: 110 / 3,
            avgPressure: 85,
            maxPressure: 100,
            lastStatusID: 2,
            lastStatus: 'Stopped',
          },
        ]);
      // 4 of 7.
      expect
        .soft(await load('pump', [PUMP], t('00:00'), t('04:00'), { interval: 'all' }), state)
        .toEqual([
          {
            sitePumpID: PUMP,
            ...bucket(t('00:00'), t('04:00')),
            count: 9,
            runningPercent: 400 / 7,
            avgFrequency: 110 / 3,
            avgPressure: 85,
            maxPressure: 100,
            lastStatusID: null,
            lastStatus: null,
          },
        ]);
    });
  });

  it('tank group: level minimum, maximum and mean over the samples that carry them, and the latest total volume', async () => {
    const t = (m: string) => `2026-08-01T${m}:00Z`;
    await storeLogs(ctx, token, 'tank', [
      {
        siteTankGroupID: TANK,
        timestamp: t('00:00'),
        entryTankLevel: 10,
        exitTankLevel: 5,
        totalVolume: 1000,
      },
      { siteTankGroupID: TANK, timestamp: t('00:20'), entryTankLevel: 12, totalVolume: 1100 },
      { siteTankGroupID: TANK, timestamp: t('00:40'), exitTankLevel: 7, totalVolume: 1050 },
      { siteTankGroupID: TANK, timestamp: t('01:30'), totalVolume: 900 },
    ]);
    const levels = (e: (number | null)[], x: (number | null)[]) => ({
      minEntryTankLevel: e[0],
      maxEntryTankLevel: e[1],
      avgEntryTankLevel: e[2],
      minExitTankLevel: x[0],
      maxExitTankLevel: x[1],
      avgExitTankLevel: x[2],
    });
    await inBothStates(ctx, async (state) => {
      expect.soft(await load('tank', [TANK], t('00:00'), t('02:00')), state).toEqual([
        {
          siteTankGroupID: TANK,
          ...bucket(t('00:00'), t('01:00')),
          count: 3,
          ...levels([10, 12, 11], [5, 7, 6]),
          lastTotalVolume: 1050,
        },
        {
          siteTankGroupID: TANK,
          ...bucket(t('01:00'), t('02:00')),
          count: 1,
          ...levels([null, null, null], [null, null, null]),
          lastTotalVolume: 900,
        },
      ]);
      expect
        .soft(await load('tank', [TANK], t('00:00'), t('02:00'), { interval: '1d' }), state)
        .toEqual([
          {
            siteTankGroupID: TANK,
            ...bucket(t('00:00'), t('02:00')),
            count: 4,
            ...levels([10, 12, 11], [5, 7, 6]),
            lastTotalVolume: 900,
          },
        ]);
    });
  });

  // Meter readings: r0 is the meter's first ever; r3 and r7 carry no total; r5 is a counter reset.
  const m = (time: string, fields: Row) => ({ flowMeterID: METER, timestamp: time, ...fields });
  const t = (hm: string) => `2026-08-02T${hm}:00Z`;
  const READINGS = [
    m('2026-08-01T23:50:00Z', { totalVolume: 100 }), // r0
    m(t('00:05'), { totalVolume: 110, flowRate: 10, pressure: 50 }), // r1: +10
    m(t('00:15'), { flowRate: 30, pressure: 70 }), // r3: no total
    m(t('00:20'), { totalVolume: 125, flowRate: 20 }), // r2: +15
    m(t('01:10'), { totalVolume: 140 }), // r4: +15
    m(t('01:40'), { totalVolume: 5 }), // r5: reset, +5
    m(t('02:15'), { totalVolume: 20 }), // r6: +15
    m(t('03:30'), { flowRate: 40 }), // r7: no total
  ];
  const meter = (
    start: string,
    end: string,
    count: number,
    volume: number | null,
    lastTotalVolume: number | null,
    rates: (number | null)[] = [null, null, null],
  ) => ({
    flowMeterID: METER,
    ...bucket(start, end),
    count,
    volume,
    lastTotalVolume,
    avgFlowRate: rates[0],
    maxFlowRate: rates[1],
    avgPressure: rates[2],
  });

  it('meter: volume from the previous reading (in an earlier bucket or before start), resets, skipped readings and nulls', async () => {
    await storeLogs(ctx, token, 'meter', READINGS);
    await inBothStates(ctx, async (state) => {
      const hour0 = meter(t('00:00'), t('01:00'), 3, 25, 125, [20, 30, 60]);
      expect
        .soft(await load('meter', [METER], t('00:00'), t('03:00')), state)
        .toEqual([
          hour0,
          meter(t('01:00'), t('02:00'), 2, 20, 5),
          meter(t('02:00'), t('03:00'), 1, 15, 20),
        ]);
      expect
        .soft(await load('meter', [METER], t('00:00'), t('03:00'), { interval: 'all' }), state)
        .toEqual([meter(t('00:00'), t('03:00'), 6, 60, 20, [20, 30, 60])]);
      expect
        .soft(await load('meter', [METER], t('00:00'), t('03:00'), { interval: '15m' }), state)
        .toEqual([
          meter(t('00:00'), t('00:15'), 1, 10, 110, [10, 10, 50]),
          meter(t('00:15'), t('00:30'), 2, 15, 125, [25, 30, 70]),
          meter(t('01:00'), t('01:15'), 1, 15, 140),
          meter(t('01:30'), t('01:45'), 1, 5, 5),
          meter(t('02:15'), t('02:30'), 1, 15, 20),
        ]);
      // The meter's very first reading adds nothing.
      expect
        .soft(await load('meter', [METER], '2026-08-01T23:00:00Z', t('01:00')), state)
        .toEqual([meter('2026-08-01T23:00:00Z', t('00:00'), 1, 0, 100), hour0]);
      // A cut first bucket: the previous reading (r1) lies before start.
      expect
        .soft(await load('meter', [METER], t('00:10'), t('01:00')), state)
        .toEqual([meter(t('00:10'), t('01:00'), 2, 15, 125, [25, 30, 70])]);
      expect
        .soft(await load('meter', [METER], t('00:16'), t('00:30'), { interval: '15m' }), state)
        .toEqual([meter(t('00:16'), t('00:30'), 1, 15, 125, [20, 20, null])]);
      // A bucket whose readings carry no total has no volume.
      expect
        .soft(await load('meter', [METER], t('03:00'), t('04:00')), state)
        .toEqual([meter(t('03:00'), t('04:00'), 1, null, null, [40, 40, null])]);
    });
  });

  it('meter: the volumes of adjacent buckets add up to the volume of their union, in every zone and interval', async () => {
    // The readings of the test above; a whole-days range also reads day rollups once refreshed.
    const ranges = [
      ['2026-08-01T20:00:00Z', t('04:00')],
      ['2026-07-30T00:00:00Z', '2026-08-05T00:00:00Z'],
    ];
    const check = async (state: string) => {
      for (const [start, end] of ranges) {
        const all = await load('meter', [METER], start, end, { interval: 'all' });
        expect
          .soft(
            all.map((e) => [e.count, e.volume]),
            state,
          )
          .toEqual([[8, 60]]);
        for (const timeZone of ['UTC', 'America/Chicago', 'Asia/Kathmandu', 'Europe/Berlin'])
          for (const interval of ['15m', '1h', '1d']) {
            const parts = await load('meter', [METER], start, end, { interval, timeZone });
            const sum = parts.reduce((s, e) => s + ((e.volume as number | null) ?? 0), 0);
            expect
              .soft(
                [sum, parts.reduce((s, e) => s + (e.count as number), 0)],
                `${state} ${timeZone} ${interval} ${start}`,
              )
              .toEqual([60, 8]);
          }
      }
    };
    await check('clean');
    // The same with every bucket marked stale (as after data written around the upload path).
    await markAll(ctx.db, UNITS.meter);
    await inBothStates(ctx, check);
  });
});
