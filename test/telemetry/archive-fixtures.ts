import { expect } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { EQUIPMENT } from '../../src/equipment.js';
import { logRows } from '../../src/telemetry/archive/days.js';
import { rollupRows } from '../../src/telemetry/archive/rollup-days.js';
import { KINDS, type TelemetryKind } from '../../src/telemetry/kinds.js';
import { UNITS } from '../../src/telemetry/rollups/units.js';
import type { TestContext } from '../helper.js';

// Helpers of the archive suites (archive-pass, archive-reads, archive-property).

/** Every log of an equipment, rows and archive, as text in time order (doubles as their bytes). */
export async function logsOf(ctx: TestContext, kind: TelemetryKind, id: number) {
  const spec = KINDS[kind];
  const cols = spec.fields.map((f) =>
    f.type === 'float8'
      ? `coalesce(encode(float8send(${f.column}), 'hex'), '-')`
      : `coalesce(${f.column}::text, '-')`,
  );
  return (
    await ctx.db.query<{ line: string }>(
      `SELECT ts::text || ' ' || ${cols.join(" || ' ' || ")} AS line FROM ${logRows(kind, { ids: `= ${id}` })} x ORDER BY ts`,
    )
  ).map((r) => r.line);
}

/** Expects two texts to be the same; when they are not, shows where they first differ, readably. */
export function expectSameText(actual: string, expected: string, label: string) {
  if (actual === expected) return;
  let k = 0;
  while (actual[k] === expected[k]) k++;
  expect(actual.slice(Math.max(0, k - 200), k + 200), `${label} (at character ${k})`).toBe(
    expected.slice(Math.max(0, k - 200), k + 200),
  );
}

/**
 * A twin of an equipment: a new id with the very configuration of `from` (every column of its row:
 * site, units, step...).
 */
export async function twinEquipment(db: Database, kind: TelemetryKind, from: number, to: number) {
  const { table, idColumn } = EQUIPMENT[kind];
  const rows = await db.query<{ id: number }>(
    `INSERT INTO ${table}
     SELECT (jsonb_populate_record(NULL::${table}, to_jsonb(e) || jsonb_build_object('${idColumn}', $2::int))).*
       FROM ${table} e WHERE ${idColumn} = $1
     RETURNING ${idColumn} AS id`,
    [from, to],
  );
  expect(rows.map((r) => r.id)).toEqual([to]);
}

/** Every rollup unit of an equipment (every level; rows and archived units) as text, doubles as their bytes. */
export async function rollupsOf(ctx: TestContext, kind: TelemetryKind, id: number) {
  const spec = UNITS[kind];
  const cols = spec.columns.map((c) =>
    c.type === 'float8'
      ? `coalesce(encode(float8send(${c.name}), 'hex'), '-')`
      : `coalesce(${c.name}::text, '-')`,
  );
  const lines: string[] = [];
  for (const level of [15, 60, 1440])
    lines.push(
      ...(
        await ctx.db.query<{ line: string }>(
          `SELECT level || ' ' || bucket::text || ' ' || ${cols.join(" || ' ' || ")} AS line
             FROM ${rollupRows(kind, { ids: `= ${id}`, level, from: "'-infinity'::timestamptz", to: "'infinity'::timestamptz" })} x ORDER BY bucket`,
        )
      ).map((r) => r.line),
    );
  return lines;
}
