import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { EQUIPMENT } from '../../src/equipment.js';
import { daysTable } from '../../src/telemetry/archive/days.js';
import { runArchive } from '../../src/telemetry/archive/pass.js';
import { KINDS, type TelemetryKind } from '../../src/telemetry/kinds.js';
import { refreshAll } from '../../src/telemetry/rollups/refresh.js';
import { bearer, describeEachBackend, startApp, type TestContext } from '../helper.js';
import { count, METER, poster, PUMP, SENSOR, TANK } from './fixtures.js';
import { IDS_FIELD, LOAD_URL, RAW_URL } from './download-fixtures.js';
import { expectSameText, logsOf, rollupsOf, twinEquipment } from './archive-fixtures.js';
import { random } from '../../src/random.js';

// Archived days answer as rows, whatever was uploaded around them. Each run makes two twins of an
// equipment of every kind (A and B: the same configuration, site and zone), uploads the same random
// series to both (regular and irregular times; short decimals, whole numbers and any doubles), has
// the archive pass archive some days of A only (they are uploaded to A before the pass, and to B
// after it), uploads the same late, replayed and replacing records into archived and live days of
// both (each upload answered with the same counts), and then every read route must answer A and B
// with the same bytes once A's id is written as B's: raw logs (JSON and CSV), event- and
// time-weighted summaries of every kind (several intervals and zones, a half-hour one among them),
// plot values and interpolated values. Then, in some runs, the pass archives every day again (A's
// days moved back by the uploads, and all of B's) and the reads are compared once more.

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** Five days of logs from here, across the end of daylight saving time in America/St_Johns. */
const D0 = Date.UTC(2025, 9, 31);
const DAYS = 5;
const iso = (t: number) => new Date(t).toISOString();
/** Runs of the property (more with ARCHIVE_PROPERTY_RUNS, for a longer search). */
const RUNS = Number(process.env.ARCHIVE_PROPERTY_RUNS ?? 8);
const KIND_LIST = ['sensor', 'meter', 'pump', 'tank'] as const;
const BASE: Record<TelemetryKind, number> = {
  sensor: SENSOR,
  meter: METER,
  pump: PUMP,
  tank: TANK,
};
const ID_FIELD = Object.fromEntries(KIND_LIST.map((k) => [k, EQUIPMENT[k].idField])) as Record<
  TelemetryKind,
  string
>;
const ZONES = ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'site'] as const;
const INTERVALS = ['15m', '1h', '1d', 'all'] as const;

/** How a day's doubles look: short decimals (archived as whole numbers and a scale) or not. */
type Style = 'cents' | 'milli' | 'whole' | 'any' | 'mixed';
const STYLES: Style[] = ['cents', 'milli', 'whole', 'any', 'mixed'];
function numberOf(r: () => number, style: Style): number {
  const s = style === 'mixed' ? STYLES[Math.floor(r() * 4)] : style;
  if (s === 'cents') return Math.round((r() - 0.3) * 200_000) / 100;
  if (s === 'milli') return Math.round((r() - 0.5) * 2_000_000) / 1000;
  if (s === 'whole') return Math.floor(r() * 40);
  return r() < 0.2 ? Math.floor(r() * 1000) / 3 : (r() - 0.5) * 1e6 * r();
}

/** A record of a kind without its id field (added per twin), fields present or not at random. */
function recordOf(
  kind: TelemetryKind,
  t: number,
  r: () => number,
  style: Style,
  meterTotal: { v: number },
): Record<string, unknown> {
  const n = () => numberOf(r, style);
  const some = (p: number, f: () => unknown, name: string) => (r() < p ? { [name]: f() } : {});
  const timestamp = iso(t);
  switch (kind) {
    case 'sensor':
      return { timestamp, value: n() };
    case 'meter':
      meterTotal.v = r() < 0.02 ? 3 : meterTotal.v + Math.round(r() * 1000) / 100; // resets, now and then
      return {
        timestamp,
        ...some(0.9, () => meterTotal.v, 'totalVolume'),
        ...some(0.8, n, 'flowRate'),
        ...some(0.6, n, 'pressure'),
        ...some(0.4, n, 'dayVolume'),
        ...some(0.05, () => iso(Math.floor(t / DAY) * DAY), 'startTimestamp'),
      };
    case 'pump': {
      const s = Math.floor(r() * 5);
      return {
        timestamp,
        ...some(0.9, () => r() < 0.6, 'running'),
        ...some(0.7, n, 'frequency'),
        ...some(0.7, n, 'pressure'),
        ...(r() < 0.3 ? { statusID: s, status: `s${s}` } : {}),
      };
    }
    case 'tank':
      return {
        timestamp,
        ...some(0.9, n, 'entryTankLevel'),
        ...some(0.7, n, 'exitTankLevel'),
        ...some(0.5, n, 'totalVolume'),
      };
  }
}

/** Times within a day (ms from its start): a grid (one a minute, a second...) or any milliseconds. */
const dayTimes = fc.oneof(
  fc
    .tuple(
      fc.oneof(fc.constant(0), fc.integer({ min: 0, max: HOUR })),
      fc.oneof(fc.constantFrom(1000, MIN, 5 * MIN), fc.integer({ min: 1, max: 20 * MIN })),
      fc.integer({ min: 1, max: 150 }),
    )
    .map(([t0, step, n]) =>
      Array.from({ length: n }, (_, i) => t0 + i * step).filter((t) => t < DAY),
    ),
  fc
    .uniqueArray(
      fc.oneof(
        { arbitrary: fc.integer({ min: 0, max: DAY - 1 }), weight: 4 },
        fc.constantFrom(0, 1, 999, 12 * HOUR, DAY - 1000, DAY - 1),
      ),
      { minLength: 1, maxLength: 80 },
    )
    .map((ts) => ts.sort((a, b) => a - b)),
);
/** A kind's series: per day its times (or none) and its style. */
const seriesArb = fc.array(
  fc.record({
    times: fc.option(dayTimes, { nil: null, freq: 6 }),
    style: fc.constantFrom(...STYLES),
  }),
  { minLength: DAYS, maxLength: DAYS },
);
/** A later upload of one kind: late logs (day -1 and DAYS were never stored), replayed ones, replacing ones. */
const laterArb = fc.record({
  kind: fc.constantFrom<TelemetryKind>(...KIND_LIST),
  items: fc.array(
    fc.record({
      op: fc.constantFrom('late', 'replay', 'replace'),
      day: fc.integer({ min: -1, max: DAYS }),
      at: fc.nat(),
      n: fc.integer({ min: 1, max: 12 }),
    }),
    { minLength: 1, maxLength: 4 },
  ),
});
/** An instant of the logs' days or around them, at times a day's edge or a millisecond from it. */
const instant = fc.oneof(
  {
    arbitrary: fc.integer({ min: D0 - 2 * HOUR, max: D0 + (DAYS + 1) * DAY + 2 * HOUR }),
    weight: 4,
  },
  fc
    .tuple(fc.integer({ min: -1, max: DAYS + 1 }), fc.constantFrom(-1, 0, 1))
    .map(([d, e]) => D0 + d * DAY + e),
);
const rangeArb = fc
  .tuple(instant, instant)
  .filter(([a, b]) => a !== b)
  .map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as [number, number]);

/** What a run reads: two ranges besides the whole, an interval and zone, plot parts, a grid, times. */
const readsArb = fc.record({
  ranges: fc.tuple(rangeArb, rangeArb),
  range: fc.nat(1),
  interval: fc.constantFrom(...INTERVALS),
  zone: fc.constantFrom(...ZONES),
  intervals: fc.integer({ min: 2, max: 400 }),
  grid: fc.constantFrom('1m', '5m', '1h', '1d'),
  times: fc.array(instant, { minLength: 1, maxLength: 30 }),
});
type Reads = typeof readsArb extends fc.Arbitrary<infer T> ? T : never;

describeEachBackend('archived days, property: twins answer the same', (backend) => {
  let ctx: TestContext;
  let token: string;
  let post: ReturnType<typeof poster>;
  let run = 0;

  beforeAll(async () => {
    ctx = await startApp(backend, { settings: { ROLLUP_REFRESH_MS: 0 } });
    token = await ctx.token('*');
    post = poster(ctx, token);
  }, 180_000);
  afterAll(async () => ctx?.close());

  const upload = async (kind: TelemetryKind, id: number, records: Record<string, unknown>[]) => {
    const res = await post(
      `logs/${kind}/batch`,
      records.map((x) => ({ [ID_FIELD[kind]]: id, ...x })),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { received: number; stored: number; duplicates: number };
  };
  /** The same records to A and to B: the same answer. */
  const uploadBoth = async (
    kind: TelemetryKind,
    ids: { a: number; b: number },
    records: Record<string, unknown>[],
  ) => {
    if (!records.length) return;
    const a = await upload(kind, ids.a, records);
    const b = await upload(kind, ids.b, records);
    expect(b, `${kind} upload of ${records.length}`).toEqual(a);
    expect(a.received).toBe(records.length);
  };

  const archivedDays = (kind: TelemetryKind, id: number) =>
    count(ctx.db, daysTable(kind), `${KINDS[kind].idColumn} = $1`, [id]);

  const ask = async (url: string, body: unknown, accept: string) => {
    const res = await ctx.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(token), 'content-type': 'application/json', accept },
      payload: JSON.stringify(body),
    });
    expect(res.statusCode, `${url} ${JSON.stringify(body)}: ${res.body.slice(0, 300)}`).toBe(200);
    return res.body;
  };
  /**
   * Asks for A's and for B's answer (the body names the equipment as `$ID`); they must be the same
   * bytes once A's id, where it names the equipment (a JSON id field, a CSV line's first field), is
   * written as B's. Returns B's answer.
   */
  const same = async (
    kind: TelemetryKind,
    ids: { a: number; b: number },
    url: string,
    body: Record<string, unknown>,
    accept = 'application/json',
  ) => {
    const of = (id: number) => JSON.parse(JSON.stringify(body).replaceAll('"$ID"', String(id)));
    const a = await ask(url, of(ids.a), accept);
    const b = await ask(url, of(ids.b), accept);
    const renamed = a
      .replaceAll(`"${ID_FIELD[kind]}":${ids.a},`, `"${ID_FIELD[kind]}":${ids.b},`)
      .replaceAll(`\r\n${ids.a},`, `\r\n${ids.b},`);
    expectSameText(renamed, b, `${url} ${JSON.stringify(of(ids.b))} ${accept}`);
    return b;
  };

  /**
   * Every read route, A against B: raw logs (JSON, CSV), summaries of every kind on both bases (a
   * combination of interval, zone and range of the kind's own and the run's), plot values, and
   * interpolated values on grids and at given times. Returns how many summaries were compared.
   */
  async function compareReads(
    ids: Record<TelemetryKind, { a: number; b: number }>,
    q: Reads,
  ): Promise<number> {
    const all: [number, number] = [D0 - DAY, D0 + (DAYS + 2) * DAY];
    const [r1, r2] = q.ranges;
    const span = ([start, end]: [number, number]) => ({ start: iso(start), end: iso(end) });
    const s = ids.sensor;
    for (const [range, accept] of [
      [all, 'application/json'],
      [all, 'text/csv'],
      [r1, 'application/json'],
      [r2, 'text/csv'],
    ] as const)
      await same('sensor', s, RAW_URL, { sensorId: '$ID', ...span(range) }, accept);
    // A quarter-hour grid on a half-hour clock, days across a change of daylight saving time, the
    // site's clock, and the run's own combination.
    const own: Record<TelemetryKind, [string, string, [number, number]]> = {
      sensor: ['15m', 'Asia/Kolkata', r1],
      meter: ['1h', 'Asia/Kolkata', all],
      pump: ['1d', 'America/St_Johns', all],
      tank: ['1h', 'site', r2],
    };
    const run: [string, string, [number, number]] = [q.interval, q.zone, q.ranges[q.range]];
    let elements = 0;
    for (const [k, kind] of KIND_LIST.entries()) {
      for (const calculationBasis of ['eventWeighted', 'timeWeighted'])
        for (const [interval, timeZone, range] of [own[kind], run]) {
          const body = {
            [IDS_FIELD[kind]]: ['$ID'],
            ...span(range),
            interval,
            timeZone,
            calculationBasis,
          };
          const answer = await same(kind, ids[kind], LOAD_URL[kind], body);
          elements += (JSON.parse(answer) as unknown[]).length;
        }
      const [interval, timeZone, range] = own[kind];
      const body = { [IDS_FIELD[kind]]: ['$ID'], ...span(range), interval, timeZone };
      const calculationBasis = k % 2 ? 'eventWeighted' : 'timeWeighted';
      await same(kind, ids[kind], LOAD_URL[kind], { ...body, calculationBasis }, 'text/csv');
    }
    const plot = '/v1/sensors/logs/plot';
    await same('sensor', s, plot, { sensorId: '$ID', ...span(all), intervals: q.intervals });
    await same('sensor', s, plot, { sensorId: '$ID', ...span(r1), intervals: 1 });
    const plotCsv = { sensorId: '$ID', ...span(r2), intervals: q.intervals };
    await same('sensor', s, plot, plotCsv, 'text/csv');
    const values = '/v1/sensors/logs/interpolated';
    const grid = (interval: string, timeZone: string, range: [number, number]) => ({
      sensorIds: ['$ID'],
      ...span(range),
      interval,
      timeZone,
    });
    await same('sensor', s, values, grid('15m', 'Asia/Kolkata', all));
    await same('sensor', s, values, grid(q.grid, q.zone, r1));
    await same('sensor', s, values, { sensorIds: ['$ID'], times: q.times.map(iso) });
    return elements;
  }

  it(
    'uploads, archive passes and reads: A, partly archived, answers as B',
    async () => {
      let checked = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            seed: fc.integer(),
            series: fc.tuple(seriesArb, seriesArb, seriesArb, seriesArb),
            step: fc.boolean(),
            archived: fc.subarray(
              Array.from({ length: DAYS }, (_, d) => d),
              { minLength: 1 },
            ),
            later: fc.array(laterArb, { minLength: 1, maxLength: 6 }),
            again: fc.boolean(),
            reads: readsArb,
          }),
          async (p) => {
            run++;
            const r = random(p.seed);
            const ids = Object.fromEntries(
              KIND_LIST.map((kind, k) => [
                kind,
                { a: 700_000 + k * 10_000 + run, b: 800_000 + k * 10_000 + run },
              ]),
            ) as Record<TelemetryKind, { a: number; b: number }>;
            for (const kind of KIND_LIST) {
              await twinEquipment(ctx.db, kind, BASE[kind], ids[kind].a);
              await twinEquipment(ctx.db, kind, BASE[kind], ids[kind].b);
            }
            await ctx.db.query(`UPDATE sensors SET step = $1 WHERE sensor_id = ANY($2::int[])`, [
              p.step,
              [ids.sensor.a, ids.sensor.b],
            ]);

            // The series, day by day; the days to archive go to A first, alone.
            const days = new Map<TelemetryKind, Record<string, unknown>[][]>();
            const latest = new Map<TelemetryKind, Map<string, Record<string, unknown>>>();
            for (const [k, kind] of KIND_LIST.entries()) {
              const total = { v: 1000 };
              days.set(
                kind,
                p.series[k].map(({ times, style }, d) =>
                  (times ?? []).map((t) => recordOf(kind, D0 + d * DAY + t, r, style, total)),
                ),
              );
              latest.set(
                kind,
                new Map(
                  days
                    .get(kind)!
                    .flat()
                    .map((x) => [x.timestamp as string, x]),
                ),
              );
            }
            const first = (kind: TelemetryKind) =>
              days
                .get(kind)!
                .filter((_, d) => p.archived.includes(d))
                .flat();
            const rest = (kind: TelemetryKind) =>
              days
                .get(kind)!
                .filter((_, d) => !p.archived.includes(d))
                .flat();
            /** The days of A that the first pass archives: those it uploaded logs of. */
            const archivedAtFirst = (kind: TelemetryKind) =>
              p.archived.filter((d) => p.series[KIND_LIST.indexOf(kind)][d].times !== null).length;
            const answers = new Map<TelemetryKind, unknown>();
            for (const kind of KIND_LIST)
              if (first(kind).length)
                answers.set(kind, await upload(kind, ids[kind].a, first(kind)));
            await refreshAll(ctx.db);
            const report = await runArchive(ctx.db, { days: 2 });
            expect(report.ran).toBe(true);
            expect(report.failed).toEqual([]);
            for (const kind of KIND_LIST)
              expect(await archivedDays(kind, ids[kind].a)).toBe(archivedAtFirst(kind));
            // The same answers for B's first upload (nothing stored before either).
            for (const kind of KIND_LIST)
              if (first(kind).length) {
                const b = await upload(kind, ids[kind].b, first(kind));
                expect(b).toEqual(answers.get(kind));
                expect(b).toEqual({
                  received: first(kind).length,
                  stored: first(kind).length,
                  duplicates: 0,
                });
              }
            for (const kind of KIND_LIST) await uploadBoth(kind, ids[kind], rest(kind));
            await refreshAll(ctx.db);

            // Late, replayed and replacing records, into archived days and live ones, to both: first
            // one of each into A's archived days (of every kind), then the run's own.
            const inArchived = (x: Record<string, unknown>) =>
              p.archived.includes(Math.floor((Date.parse(x.timestamp as string) - D0) / DAY));
            for (const kind of KIND_LIST) {
              const old = [...latest.get(kind)!.values()].filter(inArchived);
              const late = D0 + p.archived[0] * DAY + ((p.seed >>> 5) % DAY);
              const records = [recordOf(kind, late, r, 'cents', { v: 7 })];
              if (old.length) {
                const replaced = old[(p.seed >>> 3) % old.length];
                const t = Date.parse(replaced.timestamp as string);
                records.push(
                  old[(p.seed >>> 7) % old.length],
                  recordOf(kind, t, r, 'any', { v: 8 }),
                );
              }
              await uploadBoth(kind, ids[kind], records);
              for (const x of records) latest.get(kind)!.set(x.timestamp as string, x);
            }
            // (which moved A's days they went into back to rows)
            for (const kind of KIND_LIST)
              expect(await archivedDays(kind, ids[kind].a)).toBeLessThan(
                Math.max(1, archivedAtFirst(kind)),
              );
            for (const { kind, items } of p.later) {
              const known = [...latest.get(kind)!.values()];
              const records: Record<string, unknown>[] = [];
              for (const { op, day, at, n } of items)
                for (let j = 0; j < n; j++) {
                  if (op === 'late' || !known.length) {
                    const t = D0 + day * DAY + ((at + j * 7_919_003) % DAY);
                    records.push(recordOf(kind, t, r, STYLES[(at + j) % 5], { v: at % 5000 }));
                  } else {
                    const old = known[(at + j * 31) % known.length];
                    records.push(
                      op === 'replay'
                        ? old
                        : recordOf(kind, Date.parse(old.timestamp as string), r, 'mixed', { v: j }),
                    );
                  }
                }
              await uploadBoth(kind, ids[kind], records);
              for (const x of records) latest.get(kind)!.set(x.timestamp as string, x);
            }

            for (let pass = 0; pass < (p.again ? 2 : 1); pass++) {
              if (pass === 1) {
                // Every day due archived again: A's days moved back by the uploads, and all of B's.
                await refreshAll(ctx.db);
                const again = await runArchive(ctx.db, { days: 2 });
                expect(again.failed).toEqual([]);
                for (const kind of KIND_LIST)
                  expect(
                    await count(
                      ctx.db,
                      KINDS[kind].table,
                      `${KINDS[kind].idColumn} = ANY($1::int[])`,
                      [[ids[kind].a, ids[kind].b]],
                    ),
                  ).toBe(0);
                // Their quarters and hours were archived with them, and are the same units.
                for (const kind of KIND_LIST) {
                  expect(
                    await count(ctx.db, `${kind}_rollup_days`, `${KINDS[kind].idColumn} = $1`, [
                      ids[kind].a,
                    ]),
                  ).toBeGreaterThan(0);
                  expect(await rollupsOf(ctx, kind, ids[kind].a)).toEqual(
                    await rollupsOf(ctx, kind, ids[kind].b),
                  );
                }
              }
              for (const kind of KIND_LIST)
                expect(await logsOf(ctx, kind, ids[kind].a)).toEqual(
                  await logsOf(ctx, kind, ids[kind].b),
                );
              checked += await compareReads(ids, p.reads);
            }
          },
        ),
        // A failure's shrinking reruns the whole property: bounded, so a failing run ends in minutes.
        { numRuns: RUNS, interruptAfterTimeLimit: Math.max(240_000, RUNS * 30_000) },
      );
      // The summaries compared were not all empty.
      expect(checked).toBeGreaterThan(100);
    },
    Math.max(600_000, RUNS * 60_000),
  );
});
