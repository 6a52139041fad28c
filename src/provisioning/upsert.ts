import type { Queryable } from '../db/index.js';
import { sqlType, type Field } from '../schemas/records.js';

const quote = (c: string) => (c === 'delete' ? '"delete"' : c);
/** Column kinds beyond the interface's: json documents, uuids and bytes sent as base64. */
export type ColumnKind = Field['kind'] | 'json' | 'uuid' | 'base64';
const RECORDSET_TYPE: Partial<Record<ColumnKind, string>> = {
  bigint: 'text',
  json: 'jsonb',
  uuid: 'uuid',
  base64: 'text',
};
// bigints travel as text so no precision is lost on the way through JSON; bytes as base64.
const valueOf = (kind: ColumnKind, col: string) =>
  kind === 'bigint'
    ? `x.${col}::bigint`
    : kind === 'base64'
      ? `decode(x.${col}, 'base64')`
      : `x.${col}`;
/** Rows per statement are cut at about this much JSON. */
const CHUNK_BYTES = 4 * 1024 * 1024;

export interface UpsertSpec {
  table: string;
  key: string[];
  columns: { column: string; kind: ColumnKind }[];
  /** Set updated_at to the import time on rows that are new or whose values changed. */
  stamp: boolean;
}

/**
 * One set-based INSERT … ON CONFLICT per chunk: rows travel as one jsonb parameter and are unpacked by
 * jsonb_to_recordset. Rows whose values are unchanged are not touched, so their change stamp stays.
 * Returns how many rows were inserted or changed.
 */
export async function upsertRows(
  db: Queryable,
  spec: UpsertSpec,
  rows: Record<string, unknown>[],
  stamp: Date,
): Promise<number> {
  if (!rows.length) return 0;
  const cols = spec.columns.map((c) => quote(c.column));
  const defs = spec.columns
    .map((c) => `${quote(c.column)} ${RECORDSET_TYPE[c.kind] ?? sqlType(c.kind as Field['kind'])}`)
    .join(', ');
  const values = spec.columns.map((c) => valueOf(c.kind, quote(c.column)));
  const nonKey = cols.filter((c) => !spec.key.includes(c));
  const target = [...cols, ...(spec.stamp ? ['updated_at'] : [])];
  const sql =
    `INSERT INTO ${spec.table} (${target.join(', ')})
     SELECT ${[...values, ...(spec.stamp ? ['$2::timestamptz'] : [])].join(', ')} FROM jsonb_to_recordset($1::jsonb) AS x(${defs})
     ON CONFLICT (${spec.key.join(', ')}) DO ` +
    (nonKey.length
      ? `UPDATE SET ${[...nonKey, ...(spec.stamp ? ['updated_at'] : [])].map((c) => `${c} = EXCLUDED.${c}`).join(', ')}
         WHERE (${nonKey.map((c) => `${spec.table}.${c}`).join(', ')}) IS DISTINCT FROM (${nonKey.map((c) => `EXCLUDED.${c}`).join(', ')})`
      : 'NOTHING') +
    ` RETURNING 1`;
  let changed = 0;
  let chunk: string[] = [];
  let size = 0;
  const flush = async () => {
    const params: unknown[] = [`[${chunk.join(',')}]`];
    if (spec.stamp) params.push(stamp.toISOString());
    changed += (await db.query(sql, params)).length;
    chunk = [];
    size = 0;
  };
  for (const row of rows) {
    const json = JSON.stringify(row);
    chunk.push(json);
    size += json.length;
    if (size >= CHUNK_BYTES) await flush();
  }
  if (chunk.length) await flush();
  return changed;
}

/** Maps interface-named records to column-named rows, with extra columns merged in. */
export function toRows<R extends Record<string, unknown>>(
  fields: Field[],
  records: readonly R[],
  extra?: (r: R, i: number) => Record<string, unknown>,
) {
  return records.map((r, i) => {
    const row: Record<string, unknown> = {};
    for (const f of fields) {
      const v = r[f.name];
      row[f.column] = v === undefined ? null : f.kind === 'bigint' && v !== null ? String(v) : v;
    }
    return extra ? Object.assign(row, extra(r, i)) : row;
  });
}

export const columnsOf = (fields: Field[]) =>
  fields.map((f) => ({ column: f.column, kind: f.kind }));

/** Columns from [name, kind] pairs. */
export const cols = (...pairs: [string, ColumnKind][]): UpsertSpec['columns'] =>
  pairs.map(([column, kind]) => ({ column, kind }));
