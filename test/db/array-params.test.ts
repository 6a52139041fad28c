import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { binaryArray, numericArray, type NumericArrayType } from '../../src/db/array-params.js';
import { describeEachBackend, openTestDb } from '../helper.js';

// Numeric array parameters reach the database as the same values, in binary (PostgreSQL) or as
// literals (PGlite), nulls and the ends of each type's range included.
describeEachBackend('numeric array parameters', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend, { migrate: false });
  });
  afterAll(() => db.close());
  const binary = backend === 'postgres';
  const roundTrip = async (values: (number | boolean | null)[], type: NumericArrayType) => {
    const [row] = await db.query<{ a: unknown[]; n: number }>(
      `SELECT $1::${type} AS a, cardinality($1::${type}) AS n`,
      [numericArray(values, type, binary)],
    );
    return row.n === 0 ? [] : row.a;
  };
  const runs = { numRuns: Number(process.env.PROPERTY_RUNS ?? 60) };
  const orNull = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 8 });

  it('float8[]: every finite double, and null', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(orNull(fc.double({ noNaN: true, noDefaultInfinity: true })), { maxLength: 300 }),
        async (values) => {
          // -0 arrives as 0 either way: a literal writes it so (String(-0) is '0'), and the binary
          // form does the same, so both databases store what the service has always stored.
          const stored = await roundTrip(values, 'float8[]');
          expect(stored).toEqual(values.map((v) => (v === null ? null : v + 0)));
          for (const v of stored) if (v === 0) expect(Object.is(v, -0)).toBe(false);
        },
      ),
      runs,
    );
  });

  it('int4[]: every 32-bit integer, and null', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(orNull(fc.integer({ min: -2147483648, max: 2147483647 })), { maxLength: 300 }),
        async (values) => {
          expect(await roundTrip(values, 'int4[]')).toEqual(values);
        },
      ),
      runs,
    );
  });

  it('boolean[]: true, false and null', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(orNull(fc.boolean()), { maxLength: 300 }), async (values) => {
        expect(await roundTrip(values, 'boolean[]')).toEqual(values);
      }),
      runs,
    );
  });

  it('-0 is stored as 0, as it always was', async () => {
    const stored = await roundTrip([-0, 0, null, -1.5], 'float8[]');
    expect(stored).toEqual([0, 0, null, -1.5]);
    expect(Object.is(stored[0], -0)).toBe(false);
  });

  it('an int4 out of range is refused by the database, not wrapped around', async () => {
    expect(binaryArray([1, 2 ** 31], 'int4[]')).toBeUndefined();
    expect(binaryArray([1.5], 'int4[]')).toBeUndefined();
    await expect(roundTrip([1, 2 ** 31], 'int4[]')).rejects.toThrow(/out of range/);
  });
});
