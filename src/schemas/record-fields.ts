import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import {
  BigIdInput,
  BigIdString,
  DateTimeInput,
  DateTimeOutput,
  IntId,
  Nullable,
} from './common.js';

// How a record of the interface is described, each field once (its name, its column and its type),
// and what is derived from such a list: its schemas for provisioning (write) and for the
// configuration routes (read), and its select list.

export type FieldKind = 'int' | 'bigint' | 'float' | 'bool' | 'text' | 'time';
export interface Field {
  name: string;
  column: string;
  kind: FieldKind;
  required: boolean;
}

const SQL_TYPE: Record<FieldKind, string> = {
  int: 'integer',
  bigint: 'bigint',
  float: 'double precision',
  bool: 'boolean',
  text: 'text',
  time: 'timestamptz',
};
export const sqlType = (k: FieldKind) => SQL_TYPE[k];

/** Builds a field list from `Name:column:kind` specs; a trailing `!` marks a required field. */
export function fields(...specs: string[]): Field[] {
  return specs.map((s) => {
    const required = s.endsWith('!');
    const [name, column, kind] = (required ? s.slice(0, -1) : s).split(':');
    return { name, column, kind: kind as FieldKind, required };
  });
}

const INT32 = { minimum: -2_147_483_648, maximum: 2_147_483_647 };

/**
 * Every field named …ID is an id (the record's own, one it names, a lookup code): positive on input.
 * Output is as stored.
 */
const isId = (f: Field) => f.name.endsWith('ID');

function typeOf(kind: FieldKind, dir: 'in' | 'out', id: boolean): TSchema {
  switch (kind) {
    case 'int':
      return dir === 'in' && id ? IntId : Type.Integer(INT32);
    case 'bigint':
      return dir === 'in' ? BigIdInput : BigIdString;
    case 'float':
      return Type.Number();
    case 'bool':
      return Type.Boolean();
    case 'text':
      return Type.String({ maxLength: 4000 });
    case 'time':
      return dir === 'in' ? DateTimeInput : DateTimeOutput;
  }
}

/**
 * The TypeBox object of a record. 'in': what provisioning accepts (optional fields may be absent or null).
 * 'out': a full response record (every field present, nulls included).
 */
export function recordSchema(list: Field[], dir: 'in' | 'out', title?: string): TObject {
  const props: Record<string, TSchema> = {};
  for (const f of list) {
    const t = typeOf(f.kind, dir, isId(f));
    props[f.name] = f.required ? t : dir === 'in' ? Type.Optional(Nullable(t)) : Nullable(t);
  }
  return Type.Object(props, title ? { title } : {});
}

/** `col AS "Name", …` for reading records straight into their interface shape. */
export function selectList(list: Field[], alias: string): string {
  return list
    .map((f) => `${alias}.${f.column === 'delete' ? '"delete"' : f.column} AS "${f.name}"`)
    .join(', ');
}
