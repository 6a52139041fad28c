import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { rebuildAll, refreshAll, refreshMarked } from '../../src/telemetry/rollups/refresh.js';
import { UNITS } from '../../src/telemetry/rollups/units.js';
import { bearer, describeEachBackend } from '../helper.js';
import { METER, PUMP, SENSOR, suiteApp, TANK } from './fixtures.js';

// Summaries equal a plain aggregation of what was sent. Random series of every kind are uploaded in
// random batches (late, replayed and replacing records), with the rollups refreshed fully, partly,
// rebuilt from scratch or not at all in between; then random ranges, intervals and zones are asked for, and every answer is
// compared with an aggregation computed here, on the local clock computed here, from the records
// this test sent (the last sent value of a key wins).

type Kind = 'sensor' | 'meter' | 'pump' | 'tank';
const ID: Record<Kind, number> = { sensor: SENSOR, meter: METER, pump: PUMP, tank: TANK };
const ID_FIELD: Record<Kind, string> = {
  sensor: 'sensorID',
  meter: 'flowMeterID',
  pump: 'sitePumpID',
  tank: 'siteTankGroupID',
};
const PATH: Record<Kind, string> = {
  sensor: 'sensors',
  meter: 'meters',
  pump: 'pumps',
  tank: 'tanks',
};
const IDS: Record<Kind, string> = {
  sensor: 'sensorIds',
  meter: 'meterIds',
  pump: 'pumpIds',
  tank: 'tankGroupIds',
};
const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Asia/Kathmandu',
  'Australia/Adelaide',
  'site',
];
const SITE_ZONE = 'America/Chicago'; // the demo sites' zone
/** Interesting days: daylight-saving changes of the zones above, and plain days. */
const ANCHORS = [
  '2025-03-09',
  '2025-03-30',
  '2025-04-06',
  '2025-10-05',
  '2025-10-26',
  '2025-11-02',
  '2025-06-15',
].map((d) => Date.parse(`${d}T00:00:00Z`));
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

// ---- the reference: local clocks and plain aggregation --------------------------------------------

const fmt = new Map<string, Intl.DateTimeFormat>();
function offsetMs(zone: string, t: number): number {
  if (zone === 'UTC') return 0;
  let f = fmt.get(zone);
  if (!f)
    fmt.set(
      zone,
      (f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })),
    );
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(
    f.formatToParts(t).find((p) => p.type === 'timeZoneName')!.value,
  );
  return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) * MIN : 0;
}

/** [start, end) of the bucket holding t, before cutting. */
function bucketOf(
  t: number,
  interval: string,
  zone: string,
  qs: number,
  qe: number,
): [number, number] {
  if (interval === 'all') return [qs, qe];
  if (interval === '1d') {
    const midnight = (wall: number) => {
      const day = Math.floor(wall / DAY) * DAY;
      let g = day - offsetMs(zone, t);
      if (offsetMs(zone, g) !== offsetMs(zone, t)) g = day - offsetMs(zone, g);
      // The guess may land in the wrong day when the offset changed; settle on the zone's own reading.
      return day - offsetMs(zone, g);
    };
    const wall = t + offsetMs(zone, t);
    return [midnight(wall), midnight(wall + DAY)];
  }
  const width = interval === '15m' ? 15 * MIN : HOUR;
  const wall = t + offsetMs(zone, t);
  const start = t - (((wall % width) + width) % width);
  return [start, start + width];
}

type Rec = Record<string, any> & { t: number };

const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const nums = (rs: Rec[], f: string) =>
  rs.map((r) => r[f]).filter((v) => v !== null && v !== undefined) as number[];
const minOf = (xs: number[]) => (xs.length ? Math.min(...xs) : null);
const maxOf = (xs: number[]) => (xs.length ? Math.max(...xs) : null);

/** Expected elements of one kind for one query, from the final stored records (sorted by time). */
function expected(
  kind: Kind,
  stored: Rec[],
  q: { start: number; end: number; interval: string; zone: string },
) {
  const zone = q.zone === 'site' ? SITE_ZONE : q.zone;
  // Meter volume: each reading with a total adds its increase over the previous reading with a total.
  const add = new Map<number, number>();
  let prev: number | null = null;
  for (const r of stored) {
    if (r.totalVolume === null || r.totalVolume === undefined) continue;
    add.set(r.t, prev === null ? 0 : r.totalVolume >= prev ? r.totalVolume - prev : r.totalVolume);
    prev = r.totalVolume;
  }
  const buckets = new Map<number, { s: number; e: number; rs: Rec[] }>();
  for (const r of stored) {
    if (r.t < q.start || r.t >= q.end) continue;
    const [s, e] = bucketOf(r.t, q.interval, zone, q.start, q.end);
    const b = buckets.get(s) ?? { s: Math.max(s, q.start), e: Math.min(e, q.end), rs: [] };
    b.rs.push(r);
    buckets.set(s, b);
  }
  return [...buckets.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([, b]) => {
      const head = {
        [ID_FIELD[kind]]: ID[kind],
        start: new Date(b.s).toISOString(),
        end: new Date(b.e).toISOString(),
        count: b.rs.length,
      };
      const last = b.rs[b.rs.length - 1];
      if (kind === 'sensor') {
        const v = nums(b.rs, 'value');
        return {
          ...head,
          min: minOf(v),
          max: maxOf(v),
          avg: avg(v),
          first: b.rs[0].value,
          last: last.value,
        };
      }
      if (kind === 'meter') {
        const withTotal = b.rs.filter((r) => r.totalVolume !== null && r.totalVolume !== undefined);
        return {
          ...head,
          volume: withTotal.length ? withTotal.reduce((a, r) => a + add.get(r.t)!, 0) : null,
          lastTotalVolume: last.totalVolume ?? null,
          avgFlowRate: avg(nums(b.rs, 'flowRate')),
          maxFlowRate: maxOf(nums(b.rs, 'flowRate')),
          avgPressure: avg(nums(b.rs, 'pressure')),
        };
      }
      if (kind === 'pump') {
        const run = b.rs.filter((r) => r.running !== null && r.running !== undefined);
        return {
          ...head,
          runningPercent: run.length
            ? (100 * run.filter((r) => r.running).length) / run.length
            : null,
          avgFrequency: avg(nums(b.rs, 'frequency')),
          avgPressure: avg(nums(b.rs, 'pressure')),
          maxPressure: maxOf(nums(b.rs, 'pressure')),
          lastStatusID: last.statusID ?? null,
          lastStatus: last.status ?? null,
        };
      }
      const en = nums(b.rs, 'entryTankLevel');
      const ex = nums(b.rs, 'exitTankLevel');
      return {
        ...head,
        minEntryTankLevel: minOf(en),
        maxEntryTankLevel: maxOf(en),
        avgEntryTankLevel: avg(en),
        minExitTankLevel: minOf(ex),
        maxExitTankLevel: maxOf(ex),
        avgExitTankLevel: avg(ex),
        lastTotalVolume: last.totalVolume ?? null,
      };
    });
}

/** Equal, with sums compared to 1e-9 (the database adds in another order). */
function sameSummaries(got: any[], want: any[]): string | undefined {
  if (got.length !== want.length) return `length ${got.length} != ${want.length}`;
  for (let i = 0; i < got.length; i++) {
    for (const k of Object.keys(want[i])) {
      const [g, w] = [got[i][k], want[i][k]];
      const ok =
        typeof w === 'number' && typeof g === 'number'
          ? Math.abs(g - w) <= 1e-9 * Math.max(1, Math.abs(w))
          : g === w;
      if (!ok) return `element ${i} (${want[i].start}) field ${k}: got ${g}, want ${w}`;
    }
    if (Object.keys(got[i]).length !== Object.keys(want[i]).length)
      return `element ${i} has fields ${Object.keys(got[i])}`;
  }
  return undefined;
}

// ---- random scenarios ---------------------------------------------------------------------------

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 4 });
const value = fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true });
const FIELDS: Record<Kind, fc.Arbitrary<Record<string, unknown>>> = {
  sensor: fc.record({ value }),
  meter: fc.record({
    totalVolume: maybe(fc.integer({ min: 0, max: 5000 }).map((n) => n / 4)),
    flowRate: maybe(value),
    pressure: maybe(value),
  }),
  pump: fc.record({
    running: maybe(fc.boolean()),
    frequency: maybe(value),
    pressure: maybe(value),
    statusID: maybe(fc.integer({ min: 0, max: 9 })),
    status: maybe(fc.constantFrom('Running', 'Stopped', 'Tripped')),
  }),
  tank: fc.record({
    entryTankLevel: maybe(value),
    exitTankLevel: maybe(value),
    totalVolume: maybe(value),
  }),
};

const scenario = fc.record({
  anchor: fc.constantFrom(...ANCHORS),
  kind: fc.constantFrom<Kind>('sensor', 'meter', 'pump', 'tank'),
  // Offsets (seconds) within about two days around the anchor: many share a quarter, an hour, a day.
  records: fc.array(fc.tuple(fc.integer({ min: -36 * 3600, max: 36 * 3600 }), fc.nat(9)), {
    minLength: 1,
    maxLength: 60,
  }),
  batches: fc.integer({ min: 1, max: 4 }),
  refreshes: fc.array(fc.constantFrom('none', 'some', 'all', 'rebuild'), {
    minLength: 4,
    maxLength: 4,
  }),
  queries: fc.array(
    fc.record({
      from: fc.integer({ min: -40 * 3600, max: 30 * 3600 }),
      length: fc.integer({ min: 1, max: 80 * 3600 }),
      interval: fc.constantFrom('15m', '1h', '1d', 'all'),
      zone: fc.constantFrom(...ZONES),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  seed: fc.integer(),
});

describeEachBackend('summaries equal a plain aggregation (property)', (backend) => {
  const t = suiteApp(backend, { ROLLUP_REFRESH_MS: 0 });
  /** Everything sent so far, per kind: time -> record, the last sent wins. */
  const sent: Record<Kind, Map<number, Rec>> = {
    sensor: new Map(),
    meter: new Map(),
    pump: new Map(),
    tank: new Map(),
  };
  let headers: Record<string, string>;
  beforeAll(() => {
    headers = { ...bearer(t.token), 'content-type': 'application/json' };
  });

  it('for random late, replayed and replacing uploads, every interval and zone', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.gen(), async (s, gen) => {
        const kind = s.kind;
        const records = s.records.map(([off, ms]) => ({
          t: s.anchor + off * 1000 + ms * 100,
          fields: gen(() => FIELDS[kind]),
        }));
        // Random batches in random order (fast-check shuffles by the generated split), re-sending some.
        const batches: (typeof records)[] = Array.from({ length: s.batches }, () => []);
        records.forEach((r, i) =>
          batches[(((i * 7 + s.seed) % s.batches) + s.batches) % s.batches].push(r),
        );
        if (records.length > 2) batches.push(records.slice(0, 2)); // a replay
        for (const [b, batch] of batches.entries()) {
          if (!batch.length) continue;
          const body = batch.map((r) => ({
            [ID_FIELD[kind]]: ID[kind],
            timestamp: new Date(r.t).toISOString(),
            ...r.fields,
          }));
          const res = await t.ctx.app.inject({
            method: 'POST',
            url: `/v1/edge/logs/${kind}/batch`,
            headers,
            payload: body,
          });
          expect(res.statusCode, res.body).toBe(201);
          for (const r of batch) sent[kind].set(r.t, { t: r.t, ...(r.fields as object) });
          const refresh = s.refreshes[b % s.refreshes.length];
          if (refresh === 'all') await refreshAll(t.ctx.db);
          if (refresh === 'some') await refreshMarked(t.ctx.db, UNITS[kind], 3);
          if (refresh === 'rebuild') await rebuildAll(t.ctx.db);
        }
        const stored = [...sent[kind].values()].sort((a, b) => a.t - b.t);
        for (const q of s.queries) {
          const query = {
            start: s.anchor + q.from * 1000 + 1234,
            end: s.anchor + (q.from + q.length) * 1000 + 1234,
            interval: q.interval,
            zone: q.zone,
          };
          const res = await t.ctx.app.inject({
            method: 'POST',
            url: `/v1/${PATH[kind]}/logs/load`,
            headers,
            payload: {
              [IDS[kind]]: [ID[kind]],
              start: new Date(query.start).toISOString(),
              end: new Date(query.end).toISOString(),
              interval: q.interval,
              timeZone: q.zone,
            },
          });
          expect(res.statusCode, res.body).toBe(200);
          const problem = sameSummaries(res.json(), expected(kind, stored, query));
          if (problem && process.env.PROPERTY_DEBUG) {
            const range = [new Date(query.start).toISOString(), new Date(query.end).toISOString()];
            console.log(
              problem,
              JSON.stringify(query),
              range,
              await t.ctx.db.query(
                `SELECT level, bucket, count FROM ${UNITS[kind].rollupTable} WHERE bucket >= $1::timestamptz - interval '1 day' AND bucket < $2 ORDER BY 1, 2`,
                range,
              ),
              await t.ctx.db.query(
                `SELECT * FROM rollup_dirty WHERE bucket >= $1::timestamptz - interval '1 day' AND bucket < $2`,
                range,
              ),
              await t.ctx.db.query(
                `SELECT ts FROM ${UNITS[kind].logTable} WHERE ts >= $1 AND ts < $2 ORDER BY ts`,
                range,
              ),
            );
          }
          expect(
            problem,
            `${kind} ${JSON.stringify(query)} got ${res.body.slice(0, 1500)} want ${JSON.stringify(expected(kind, stored, query)).slice(0, 1500)}`,
          ).toBeUndefined();
        }
      }),
      {
        numRuns: Number(process.env.PROPERTY_RUNS ?? 60),
        endOnFailure: !!process.env.PROPERTY_DEBUG,
      },
    );
  }, 600_000);
});
