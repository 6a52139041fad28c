import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ARCHIVE_VERSION,
  decodeDay,
  encodeDay,
  type ArchiveDay,
  type ArchiveValue,
} from '../../src/telemetry/archive/codec.js';
import {
  KINDS,
  KIND_LIST,
  type ColumnType,
  type TelemetryKind,
} from '../../src/telemetry/kinds.js';

// The archive codec gives back exactly what it was given: every time and every value bit for bit
// (Object.is, so -0 is not 0), for any series of every kind, and refuses what it cannot keep exactly.

const LIMIT = 2n ** 50n;
const DAY0 = Date.UTC(2026, 7, 1);

/** Whether a decoded day is the given one, value by value with Object.is. */
function expectSame(got: ArchiveDay, want: ArchiveDay): void {
  expect(got.ts.length).toBe(want.ts.length);
  want.ts.forEach((t, i) => {
    if (!Object.is(got.ts[i], t)) expect.fail(`ts[${i}]: ${got.ts[i]} for ${t}`);
  });
  expect(got.columns.length).toBe(want.columns.length);
  want.columns.forEach((col, c) => {
    expect(got.columns[c].length).toBe(col.length);
    col.forEach((v, i) => {
      if (!Object.is(got.columns[c][i], v))
        expect.fail(`column ${c}[${i}]: ${String(got.columns[c][i])} for ${String(v)}`);
    });
  });
}

const roundTrip = (kind: TelemetryKind, day: ArchiveDay, level?: number) =>
  decodeDay(kind, encodeDay(kind, day, { level }));

const exactly = <T>(n: number, arb: fc.Arbitrary<T>) =>
  fc.array(arb, { minLength: n, maxLength: n });
const big = (min: bigint, max: bigint) => fc.bigInt({ min, max }).map(Number);

/** n strictly increasing times: anywhere in ±2^50, or a start and gaps of a millisecond to two minutes. */
const times = (n: number) =>
  fc.oneof(
    fc
      .uniqueArray(big(-LIMIT, LIMIT), { minLength: n, maxLength: n })
      .map((ts) => ts.sort((a, b) => a - b)),
    fc
      .tuple(
        big(-LIMIT, LIMIT - 120_001n * BigInt(n)),
        exactly(n, fc.integer({ min: 1, max: 120_000 })),
      )
      .map(([start, gaps]) => gaps.map((g) => (start += g))),
  );

const specials = fc.constantFrom(
  -0,
  0,
  5e-324,
  -5e-324,
  2.2250738585072014e-308,
  1e15,
  -1e15,
  2 ** 50,
  2 ** 53,
  Number.MAX_VALUE,
  -Infinity,
  Infinity,
  NaN,
  0.1 + 0.2,
);
/** A decimal with k digits after the point, small or as large as the codec's integers go. */
const decimal = (k: number) =>
  fc.oneof(fc.integer({ min: -1e9, max: 1e9 }), big(-LIMIT, LIMIT)).map((m) => m / 10 ** k);

const VALUES: Record<ColumnType, fc.Arbitrary<fc.Arbitrary<ArchiveValue>>> = {
  // Per column: all decimals of one scale (the scaled-integer path), any doubles (the XOR path), or a mix.
  float8: fc.oneof(
    fc.integer({ min: 0, max: 16 }).map(decimal),
    fc.constant(fc.double()),
    fc.constant(fc.oneof(specials, fc.double(), decimal(2))),
    // Decimals with an odd -0 among them: the -0 must not pass as the integer 0.
    fc.constant(
      fc.oneof({ weight: 9, arbitrary: decimal(2) }, { weight: 1, arbitrary: fc.constant(-0) }),
    ),
  ),
  bool: fc.constant(fc.boolean()),
  int4: fc.constant(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
  timestamptz: fc.constant(big(-LIMIT, LIMIT)),
  text: fc.constant(
    fc.oneof(fc.constantFrom('Running', 'Stopped', 'Fault', ''), fc.string({ unit: 'grapheme' })),
  ),
};

/** A column of n values of a type: every one present, none, or some. */
const column = (type: ColumnType, n: number) =>
  VALUES[type].chain((values) =>
    fc.oneof(
      exactly(n, values),
      fc.constant(new Array<ArchiveValue>(n).fill(null)),
      exactly(n, fc.option(values, { nil: null, freq: 3 })),
    ),
  );

const series = (kind: TelemetryKind) =>
  fc.integer({ min: 0, max: 300 }).chain((n) =>
    fc.record({
      ts: times(n),
      columns: fc.tuple(...KINDS[kind].fields.map((f) => column(f.type, n))),
    }),
  );

describe('archive codec', () => {
  for (const { kind } of KIND_LIST) {
    it(`gives back any series of ${kind} logs bit for bit`, () => {
      fc.assert(
        fc.property(series(kind), fc.constantFrom(undefined, 0, 1, 9), (day, level) => {
          const data = encodeDay(kind, day, { level });
          expect(data[0]).toBe(ARCHIVE_VERSION);
          expectSame(decodeDay(kind, data), day);
        }),
        { numRuns: 300 },
      );
    });
  }

  it('keeps an empty day, one sample and columns of nulls for every kind', () => {
    for (const { kind, fields } of KIND_LIST) {
      expectSame(roundTrip(kind, { ts: [], columns: fields.map(() => []) }), {
        ts: [],
        columns: fields.map(() => []),
      });
      const one = { ts: [DAY0 + 1], columns: fields.map(() => [null]) };
      expectSame(roundTrip(kind, one), one);
      const nulls = {
        ts: [DAY0, DAY0 + 60_000, DAY0 + 60_001],
        columns: fields.map(() => [null, null, null]),
      };
      expectSame(roundTrip(kind, nulls), nulls);
    }
    const pump = { ts: [DAY0], columns: [[-0], [false], [12.5], [-(2 ** 31)], ['Running']] };
    expectSame(roundTrip('pump', pump), pump);
  });

  it('keeps 86,400 one-second samples of a drifting level at two decimals in well under 2 bytes each', () => {
    let level = 5_000;
    let seed = 7;
    const noise = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31 - 0.5) * 10;
    const ts = Array.from({ length: 86_400 }, (_, i) => DAY0 + i * 1000);
    const values = ts.map(() => Math.round((level += noise() / 10) + noise()) / 100);
    const data = encodeDay('sensor', { ts, columns: [values] });
    expectSame(decodeDay('sensor', data), { ts, columns: [values] });
    expect(data.length / 86_400).toBeLessThan(2);
  });

  it('keeps the edges of float8: -0, subnormals, ±1e15, infinities, NaN, the largest double', () => {
    const values = [
      -0,
      0,
      5e-324,
      -5e-324,
      1e15,
      -1e15,
      1e15 - 0.01,
      Number.MAX_VALUE,
      -Infinity,
      Infinity,
      NaN,
      -0,
    ];
    const day = { ts: values.map((_, i) => DAY0 + i), columns: [values] };
    for (const level of [0, 6]) expectSame(roundTrip('sensor', day, level), day);
    // The same values one at a time, each alone in its column (the decimal path's edge cases).
    for (const v of values)
      expectSame(roundTrip('sensor', { ts: [DAY0], columns: [[v]] }), {
        ts: [DAY0],
        columns: [[v]],
      });
  });

  it('stores decimals as scaled integers, not as their bits', () => {
    const ts = Array.from({ length: 1000 }, (_, i) => DAY0 + i * 60_000);
    const values = ts.map((_, i) => Math.round(1234.5 * 100 + ((i * 7919) % 41) - 20) / 100);
    // Uncompressed, to see the encoding itself: XOR'd bits would take at least 3 bytes a value here.
    expect(encodeDay('sensor', { ts, columns: [values] }, { level: 0 }).length).toBeLessThan(
      2.2 * 1000,
    );
  });

  it('refuses what it could not give back exactly', () => {
    const sensor =
      (ts: number[], values: ArchiveValue[] = ts.map(() => 1)) =>
      () =>
        encodeDay('sensor', { ts, columns: [values] });
    expect(sensor([DAY0 + 1, DAY0])).toThrow(/strictly increasing/);
    expect(sensor([DAY0, DAY0])).toThrow(/strictly increasing/);
    expect(sensor([DAY0 + 0.5])).toThrow(/whole number/);
    expect(sensor([2 ** 50 + 1])).toThrow(/whole number/);
    expect(sensor([-0])).toThrow(/whole number/);
    expect(sensor([DAY0], ['1'])).toThrow(/not a number/);
    expect(sensor([DAY0, DAY0 + 1], [1])).toThrow(/1 values for 2 times/);
    expect(() => encodeDay('sensor', { ts: [], columns: [] })).toThrow(/1 value columns/);
    const pump =
      (status: ArchiveValue, statusId: ArchiveValue = 1, running: ArchiveValue = true) =>
      () =>
        encodeDay('pump', { ts: [DAY0], columns: [[1], [running], [1], [statusId], [status]] });
    expect(pump('\ud800')).toThrow(/well-formed/);
    expect(pump('ok', 2 ** 31)).toThrow(/32-bit integer/);
    expect(pump('ok', -0)).toThrow(/32-bit integer/);
    expect(pump('ok', 1, 1)).toThrow(/boolean/);
    const meter = (start: ArchiveValue) => () =>
      encodeDay('meter', { ts: [DAY0], columns: [[start], [1], [1], [1], [1]] });
    expect(meter(DAY0 + 0.25)).toThrow(/whole number/);
    expect(meter(DAY0)).not.toThrow();
  });

  it('refuses data that is not a whole archive of the kind asked for', () => {
    const day = { ts: [DAY0, DAY0 + 60_000], columns: [[1.5, 2.5]] };
    const data = encodeDay('sensor', day, { level: 0 });
    expect(() => decodeDay('tank', data)).toThrow(/not of tank logs/);
    expect(() =>
      decodeDay('sensor', Buffer.from([ARCHIVE_VERSION + 1, ...data.subarray(1)])),
    ).toThrow(/version/);
    expect(() => decodeDay('sensor', data.subarray(0, data.length - 1))).toThrow(/ends early/);
    // A damaged count of 2^40 samples is refused before anything that long is made.
    const huge = Buffer.from([ARCHIVE_VERSION, 1, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 2]);
    expect(() => decodeDay('sensor', huge)).toThrow(/ends early/);
    expect(() => decodeDay('sensor', Buffer.concat([data, Buffer.from([0])]))).toThrow(
      /past its end/,
    );
  });
});
