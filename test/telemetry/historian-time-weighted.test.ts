import fc from 'fast-check';
import { expect, it } from 'vitest';
import { refreshAll, refreshMarked } from '../../src/telemetry/rollups/refresh.js';
import { UNITS } from '../../src/telemetry/rollups/units.js';
import { bearer, describeEachBackend } from '../helper.js';
import { parseCsv } from './download-fixtures.js';
import { METER, PUMP, SENSOR, SENSOR_2, suiteApp, TANK } from './fixtures.js';
import {
  close,
  integrate,
  lastPerTime,
  stored,
  timeWeighted,
  type Pt,
} from './historian-fixtures.js';

// Time-weighted summaries (contract 13) against an integration computed here from the records sent:
// random irregular series (gaps, samples on bucket edges, late, replayed and replacing records,
// stepped and continuous) uploaded in random order, rollups refreshed fully, partly or not at all;
// every interval and several zones.

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.parse('2025-03-30T00:00:00Z'); // daylight saving starts in Berlin

describeEachBackend('historian: time-weighted summaries', (backend) => {
  const t = suiteApp(backend, { ROLLUP_REFRESH_MS: 0 });
  const load = async (body: Record<string, unknown>, path = 'sensors') => {
    const res = await t.ctx.app.inject({
      method: 'POST',
      url: `/v1/${path}/logs/load`,
      headers: { ...bearer(t.token), 'content-type': 'application/json' },
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Record<string, any>[];
  };
  const upload = async (kind: string, records: Record<string, unknown>[]) => {
    expect((await t.post(`logs/${kind}/batch`, records)).status).toBe(201);
  };
  const reset = async (id: number, step: boolean) => {
    await t.ctx.db.query(`DELETE FROM sensor_logs WHERE sensor_id = $1`, [id]);
    await t.ctx.db.query(`DELETE FROM sensor_rollups WHERE sensor_id = $1`, [id]);
    await t.ctx.db.query(`DELETE FROM rollup_dirty WHERE kind = 1 AND equipment_id = $1`, [id]);
    await t.ctx.db.query(`UPDATE sensors SET step = $2 WHERE sensor_id = $1`, [id, step]);
  };
  const iso = (ms: number) => new Date(ms).toISOString();

  it('the 59-minute example: 150 by samples, about 101.7 by time', async () => {
    await reset(SENSOR, false);
    await upload('sensor', [
      { sensorID: SENSOR, timestamp: iso(T0), value: 100 },
      { sensorID: SENSOR, timestamp: iso(T0 + 59 * MIN), value: 200 },
      { sensorID: SENSOR, timestamp: iso(T0 + 60 * MIN), value: 100 },
    ]);
    for (const state of ['stale', 'clean']) {
      if (state === 'clean') await refreshAll(t.ctx.db);
      const body = { sensorIds: [SENSOR], start: iso(T0), end: iso(T0 + HOUR), interval: 'all' };
      const [events] = await load(body);
      const [time] = await load({ ...body, calculationBasis: 'timeWeighted' });
      expect(events.avg).toBe(150);
      // Continuous: the straight line from 100 (0:00) to 200 (0:59), then back to 100 (1:00): 150.
      expect(time.avg).toBeCloseTo(150, 9);
      expect(time).toMatchObject({ count: 2, min: 100, max: 200, first: 100, last: 200 });
      // Stepped (report by exception: a value holds until the next): 100 for 59 minutes, 200 for
      // the last one, about 101.7.
      await t.ctx.db.query(`UPDATE sensors SET step = true WHERE sensor_id = $1`, [SENSOR]);
      const [stepped] = await load({ ...body, calculationBasis: 'timeWeighted' });
      expect(stepped.avg).toBeCloseTo((100 * 59 + 200) / 60, 9);
      expect(stepped.avg.toFixed(1)).toBe('101.7');
      await t.ctx.db.query(`UPDATE sensors SET step = false WHERE sensor_id = $1`, [SENSOR]);
    }
  });

  it('gap buckets between samples get elements with count 0; eventWeighted is unchanged', async () => {
    await reset(SENSOR, false);
    await upload('sensor', [
      { sensorID: SENSOR, timestamp: iso(T0 + 30 * MIN), value: 0 },
      { sensorID: SENSOR, timestamp: iso(T0 + 3 * HOUR + 30 * MIN), value: 30 },
    ]);
    await refreshAll(t.ctx.db);
    const body = { sensorIds: [SENSOR], start: iso(T0), end: iso(T0 + 5 * HOUR) };
    expect((await load(body)).length).toBe(2);
    const tw = await load({ ...body, calculationBasis: 'timeWeighted' });
    expect(tw.map((e) => [e.start, e.count, e.min, e.avg])).toEqual([
      [iso(T0), 1, 0, 2.5],
      [iso(T0 + HOUR), 0, null, 10],
      [iso(T0 + 2 * HOUR), 0, null, 20],
      [iso(T0 + 3 * HOUR), 1, 30, 27.5],
    ]);
  });

  it('meters, pumps and tanks: runningPercent over time, averages over time', async () => {
    await upload('pump', [
      { sitePumpID: PUMP, timestamp: iso(T0 - HOUR), running: false, pressure: 10 },
      { sitePumpID: PUMP, timestamp: iso(T0 + 15 * MIN), running: true },
      // Status text with the separators of CSV and of the service's own row encoding, a quote,
      // control characters and non-ASCII: it comes back as it went in, in JSON and CSV.
      {
        sitePumpID: PUMP,
        timestamp: iso(T0 + 45 * MIN),
        running: false,
        pressure: 20,
        statusID: 7,
        status: 'stop; "manual" | a,b\u001e\u001f\n Überdruck',
      },
      { sitePumpID: PUMP, timestamp: iso(T0 + 2 * HOUR), running: false, pressure: 20 },
    ]);
    await upload('meter', [
      { flowMeterID: METER, timestamp: iso(T0), flowRate: 10, totalVolume: 5 },
      { flowMeterID: METER, timestamp: iso(T0 + 30 * MIN), totalVolume: 8 },
      { flowMeterID: METER, timestamp: iso(T0 + 2 * HOUR), flowRate: 30, totalVolume: 9 },
    ]);
    await upload('tank', [
      { siteTankGroupID: TANK, timestamp: iso(T0), entryTankLevel: 0 },
      { siteTankGroupID: TANK, timestamp: iso(T0 + HOUR), entryTankLevel: 6, exitTankLevel: 1 },
    ]);
    for (const state of ['stale', 'clean']) {
      if (state === 'clean') await refreshAll(t.ctx.db);
      const body = {
        start: iso(T0),
        end: iso(T0 + HOUR),
        interval: 'all',
        calculationBasis: 'timeWeighted',
      };
      const [pump] = await load({ ...body, pumpIds: [PUMP] }, 'pumps');
      expect(pump.runningPercent).toBeCloseTo(50, 9);
      // Pressure: the line from 10 (an hour before start) to 20 at 0:45, then 20.
      const atStart = 10 + (10 * 60) / 105;
      expect(pump.avgPressure).toBeCloseTo((((atStart + 20) / 2) * 45 + 20 * 15) / 60, 9);
      expect(pump.count).toBe(2);
      expect(pump).toMatchObject({
        lastStatusID: 7,
        lastStatus: 'stop; "manual" | a,b\u001e\u001f\n Überdruck',
      });
      // Flow rate: the line from 10 (0:00) to 30 (2:00) over the first hour: 15. Volume as in §6.
      const [meter] = await load({ ...body, meterIds: [METER] }, 'meters');
      expect(meter).toMatchObject({ count: 2, volume: 3, lastTotalVolume: 8, avgPressure: null });
      expect(meter.avgFlowRate).toBeCloseTo(15, 9);
      const [tank] = await load({ ...body, tankGroupIds: [TANK] }, 'tanks');
      expect(tank.avgEntryTankLevel).toBeCloseTo(3, 9);
      expect(tank.avgExitTankLevel).toBeNull(); // one sample: |C| = 0
      // CSV: the same elements, field by field (null as an empty field).
      for (const [path, ids, element] of [
        ['pumps', { pumpIds: [PUMP] }, pump],
        ['meters', { meterIds: [METER] }, meter],
        ['tanks', { tankGroupIds: [TANK] }, tank],
      ] as const) {
        const res = await t.ctx.app.inject({
          method: 'POST',
          url: `/v1/${path}/logs/load`,
          headers: { ...bearer(t.token), 'content-type': 'application/json', accept: 'text/csv' },
          payload: { ...body, ...ids },
        });
        expect(res.statusCode, res.body).toBe(200);
        const [head, line] = parseCsv(res.body);
        expect(head).toEqual(Object.keys(element));
        expect(line).toEqual(Object.values(element).map((v) => (v === null ? '' : String(v))));
      }
    }
  });

  // ---- the property ---------------------------------------------------------------------------
  const offset = fc.oneof(
    fc.integer({ min: -8, max: 200 }).map((q) => q * 15 * MIN), // on a quarter edge
    fc.integer({ min: -120, max: 3000 }).map((m) => m * MIN),
    fc.integer({ min: -2 * HOUR, max: 50 * HOUR }),
  );
  const scenario = fc.record({
    step: fc.boolean(),
    samples: fc.array(fc.tuple(offset, fc.integer({ min: -1000, max: 1000 })), {
      minLength: 1,
      maxLength: 25,
    }),
    replace: fc.array(fc.tuple(fc.nat(), fc.integer({ min: -50, max: 50 })), { maxLength: 3 }),
    batches: fc.integer({ min: 1, max: 4 }),
    seed: fc.nat(),
    refreshes: fc.array(fc.constantFrom('none', 'all', 'some'), { minLength: 1, maxLength: 4 }),
    queries: fc.array(
      fc.record({
        from: fc.integer({ min: -4 * 60, max: 40 * 60 }), // minutes from T0
        length: fc.integer({ min: 1, max: 36 * 60 }),
        ms: fc.integer({ min: 0, max: 59_999 }),
        interval: fc.constantFrom('15m', '1h', '1d', 'all'),
        zone: fc.constantFrom('UTC', 'Europe/Berlin', 'Asia/Kathmandu', 'America/St_Johns'),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  });

  it('for random series, uploads and refreshes: every interval and zone, against an integration here', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        await reset(SENSOR_2, s.step);
        const sent: Pt[] = s.samples.map(([o, v]) => ({ t: T0 + o, v }));
        for (const [i, v] of s.replace) sent.push({ t: sent[i % sent.length].t, v }); // replacing
        const batches: Pt[][] = Array.from({ length: s.batches }, () => []);
        sent.forEach((p, i) => batches[(i * 7 + s.seed) % s.batches].push(p));
        batches.push(sent.slice(0, 2)); // a replay of records already stored
        const final = new Map<number, number>();
        for (const [b, all] of batches.entries()) {
          const batch = lastPerTime(all);
          if (!batch.length) continue;
          // Within one batch the last record of a key wins, as across batches.
          await upload(
            'sensor',
            batch.map((p) => ({ sensorID: SENSOR_2, timestamp: iso(p.t), value: p.v })),
          );
          for (const p of batch) final.set(p.t, p.v);
          const refresh = s.refreshes[b % s.refreshes.length];
          if (refresh === 'all') await refreshAll(t.ctx.db);
          if (refresh === 'some') await refreshMarked(t.ctx.db, UNITS.sensor, 2);
        }
        const series = stored([...final].map(([t, v]) => ({ t, v })));
        for (const q of s.queries) {
          const start = T0 + q.from * MIN + q.ms;
          const end = start + q.length * MIN;
          const body = {
            sensorIds: [SENSOR_2],
            start: iso(start),
            end: iso(end),
            interval: q.interval,
            timeZone: q.zone,
            calculationBasis: 'timeWeighted',
          };
          const got = await load(body);
          const what = `${JSON.stringify(body)} series ${JSON.stringify(series)} got ${JSON.stringify(got).slice(0, 2000)}`;
          // Elements tile the covered part of the range without holes, in order.
          for (let i = 1; i < got.length; i++) expect(got[i].start, what).toBe(got[i - 1].end);
          const first = Math.max(start, series[0].t);
          const last = Math.min(end - 1, series[series.length - 1].t);
          if (first <= last) {
            expect(got.length, what).toBeGreaterThan(0);
            expect(Date.parse(got[0].start) <= first && Date.parse(got[0].end) > first, what).toBe(
              true,
            );
            const z = got[got.length - 1];
            expect(Date.parse(z.start) <= last && Date.parse(z.end) > last, what).toBe(true);
          } else expect(got, what).toEqual([]);
          let sumI = 0;
          let sumC = 0;
          for (const e of got) {
            const a = Date.parse(e.start);
            const b = Date.parse(e.end);
            const inside = series.filter((p) => p.t >= a && p.t < b);
            expect(e.count, what).toBe(inside.length);
            expect(e.min, what).toBe(inside.length ? Math.min(...inside.map((p) => p.v)) : null);
            expect(e.last, what).toBe(inside.length ? inside[inside.length - 1].v : null);
            const want = timeWeighted(series, a, b, s.step);
            expect(
              close(e.avg, want, 1e-7),
              `${what}\nelement ${JSON.stringify(e)} want ${want}`,
            ).toBe(true);
            const { integral, length } = integrate(series, a, b, s.step);
            sumI += e.avg === null ? 0 : e.avg * length;
            sumC += length;
            expect(close(e.avg === null ? 0 : e.avg * length, integral, 1e-7)).toBe(true);
          }
          // Additivity: the |C|-weighted mean of the buckets is that of their union.
          if (q.interval !== 'all' && sumC > 0) {
            const [all] = await load({ ...body, interval: 'all' });
            expect(close(all.avg, sumI / sumC, 1e-7), what).toBe(true);
          }
        }
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 60) },
    );
  }, 300_000);
});
