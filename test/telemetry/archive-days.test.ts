import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { Partitions } from '../../src/telemetry/partitions.js';
import {
  daysTable,
  logRows,
  moveDaySql,
  nearestLog,
  restoreDaysSql,
} from '../../src/telemetry/archive/days.js';
import { KINDS, type TelemetryKind } from '../../src/telemetry/kinds.js';
import { describeEachBackend, openTestDb } from '../helper.js';

// The archive's SQL on its own: any day of logs of any kind, moved into its archive row, reads back
// (logRows, nearestLog) as the very rows it was, to the bit; moved back, it is those rows again.

const DAY = 86_400_000;
const DAY0 = Date.UTC(2026, 0, 10);
const iso = (t: number) => new Date(t).toISOString();

const double = fc.oneof(
  fc.integer({ min: -100_000, max: 100_000 }).map((n) => n / 100),
  fc.integer({ min: -1000, max: 1000 }).map((n) => n / 1000 + 0.1 + 0.2),
  fc.constantFrom(0, -0, 1e15, -1e15, 5e-324, 0.1 + 0.2, 123456.789012345),
  fc.double({ min: -1e15, max: 1e15, noNaN: true, noDefaultInfinity: true }),
);
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: null, freq: 4 });
const fieldArb = (kind: TelemetryKind) =>
  fc.tuple(
    ...KINDS[kind].fields.map((f) =>
      f.type === 'float8'
        ? f.required
          ? double
          : opt(double)
        : f.type === 'bool'
          ? opt(fc.boolean())
          : f.type === 'int4'
            ? opt(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }))
            : f.type === 'text'
              ? opt(fc.string({ maxLength: 8 }))
              : opt(fc.integer({ min: DAY0 - 10 * DAY, max: DAY0 + DAY }).map(iso)),
    ),
  );
/** Times within the day: evenly spaced (a grid) or any distinct milliseconds. */
const timesArb = fc.oneof(
  fc
    .tuple(
      fc.integer({ min: 0, max: 3_600_000 }),
      fc.integer({ min: 1, max: 600_000 }),
      fc.integer({ min: 1, max: 120 }),
    )
    .map(([t0, step, n]) =>
      Array.from({ length: n }, (_, i) => t0 + i * step).filter((t) => t < DAY),
    ),
  fc.uniqueArray(fc.integer({ min: 0, max: DAY - 1 }), { minLength: 1, maxLength: 60 }),
);

/** Every log of a kind (from a table or logRows) as text, the doubles as their 8 bytes. */
const exactNullSafe = (kind: TelemetryKind, from: string) => {
  const spec = KINDS[kind];
  const cols = spec.fields.map((f) =>
    f.type === 'float8'
      ? `coalesce(encode(float8send(${f.column}), 'hex'), 'null')`
      : `coalesce(${f.column}::text, 'null')`,
  );
  return `SELECT ${spec.idColumn} AS id, ts::text AS ts, ${cols.join(" || '|' || ")} AS v FROM ${from} x ORDER BY 1, 2`;
};

describeEachBackend('archived days: exact both ways', (backend) => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDb(backend);
    await new Partitions(db).cover(DAY0 + 40 * DAY);
  });
  afterAll(() => db?.close());

  it.each(['sensor', 'meter', 'pump', 'tank'] as TelemetryKind[])(
    '%s: any day of logs reads back and moves back as it was',
    async (kind) => {
      const spec = KINDS[kind];
      const cols = spec.fields.map((f) => f.column);
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.tuple(timesArb, fc.array(fieldArb(kind), { minLength: 120, maxLength: 120 })),
            {
              minLength: 1,
              maxLength: 3,
            },
          ),
          async (equipment) => {
            await db.query(`DELETE FROM ${spec.table}`);
            await db.query(`DELETE FROM ${daysTable(kind)}`);
            const ids: number[] = [];
            for (const [i, [times, values]] of equipment.entries()) {
              const id = i + 1;
              ids.push(id);
              for (const [j, t] of times.entries()) {
                const v = values[j % values.length];
                await db.query(
                  `INSERT INTO ${spec.table} (${spec.idColumn}, ts, ${cols.join(', ')}) VALUES ($1, $2, ${cols.map((c, k) => `$${k + 3}::${spec.fields[k].type}`).join(', ')})`,
                  [id, iso(DAY0 + t), ...v.map((x) => (Object.is(x, -0) ? '-0' : x))],
                );
              }
              // A log of the day before and one of the day after stay rows.
              await db.query(
                `INSERT INTO ${spec.table} (${spec.idColumn}, ts) VALUES ($1, $2), ($1, $3)`
                  .replace(
                    'ts)',
                    `ts${spec.fields[0].required ? `, ${spec.fields[0].column}` : ''})`,
                  )
                  .replace(
                    '($1, $2), ($1, $3)',
                    spec.fields[0].required ? '($1, $2, 1), ($1, $3, 2)' : '($1, $2), ($1, $3)',
                  ),
                [id, iso(DAY0 - 1), iso(DAY0 + DAY)],
              );
            }
            const before = await db.query<{ id: number; ts: string; v: string }>(
              exactNullSafe(kind, spec.table),
            );
            const moved = await db.query<{ id: number; n: number }>(moveDaySql(kind), [
              ids,
              iso(DAY0),
              iso(DAY0 + DAY),
            ]);
            expect(moved.map((m) => m.id)).toEqual(ids);
            const [{ left }] = await db.query<{ left: number }>(
              `SELECT count(*)::int AS left FROM ${spec.table} WHERE ts >= $1 AND ts < $2`,
              [iso(DAY0), iso(DAY0 + DAY)],
            );
            expect(left).toBe(0);
            const read = await db.query(
              exactNullSafe(kind, logRows(kind, { ids: `= ANY('{${ids}}'::int[])` })),
            );
            expect(read).toEqual(before);
            // A range cut inside the day.
            const cut = equipment[0][0][Math.floor(equipment[0][0].length / 2)];
            const range = logRows(kind, {
              ids: '= 1',
              from: `'${iso(DAY0 + cut)}'::timestamptz`,
              to: `'${iso(DAY0 + DAY)}'::timestamptz`,
            });
            const inRange = before.filter(
              (r) =>
                r.id === 1 &&
                Date.parse(r.ts.replace(' ', 'T').replace(/\+00$/, 'Z')) >= DAY0 + cut &&
                Date.parse(r.ts.replace(' ', 'T').replace(/\+00$/, 'Z')) < DAY0 + DAY,
            );
            expect(await db.query(exactNullSafe(kind, range))).toEqual(inRange);
            // The nearest log before and after an instant, archived days included.
            const col = spec.fields[0].column;
            const at = `'${iso(DAY0 + cut)}'::timestamptz`;
            const [near] = await db.query<{ b: string | null; a: string | null }>(
              `SELECT ${nearestLog(kind, '1', at, 'before', col, 'ts::text')} AS b, ${nearestLog(kind, '1', at, 'after', col, 'ts::text')} AS a`,
            );
            const rows1 = before.filter((r) => r.id === 1 && !r.v.startsWith('null'));
            const t = (r: { ts: string }) =>
              Date.parse(r.ts.replace(' ', 'T').replace(/\+00$/, 'Z'));
            const prev = rows1.filter((r) => t(r) < DAY0 + cut).at(-1);
            const next = rows1.find((r) => t(r) >= DAY0 + cut);
            expect(near.b).toBe(prev?.ts ?? null);
            expect(near.a).toBe(next?.ts ?? null);
            // Back to rows: the same rows.
            const [{ n }] = await db.query<{ n: number }>(restoreDaysSql(kind), [
              ids,
              ids.map(() => iso(DAY0)),
            ]);
            expect(n).toBe(moved.reduce((s, m) => s + m.n, 0));
            expect(await db.query(exactNullSafe(kind, spec.table))).toEqual(before);
          },
        ),
        { numRuns: backend === 'pglite' ? 15 : 25 },
      );
    },
  );
});
