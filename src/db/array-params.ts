// Array parameters of numbers or booleans, for `$n::int4[]`, `$n::float8[]` and `$n::boolean[]`.
// The driver would quote each element of a JavaScript array into text, and PostgreSQL parse each
// back: for the three columns of a 1,000-record upload that was a measurable share of the CPU of both
// (the service's conversion of floats to text alone, about 0.4 ms a batch).

/** The element types these parameters take, by their SQL name in the statement's cast. */
export type NumericArrayType = 'int4[]' | 'float8[]' | 'boolean[]';

/**
 * As a PostgreSQL array literal: one join instead of the driver's quoting of each element.
 * Numbers must be finite (String(NaN) is no literal); null is NULL.
 */
export function arrayLiteral(values: readonly (number | boolean | null)[]): string {
  let plain = true;
  for (const v of values) if (v === null) plain = false;
  return `{${(plain ? values : values.map((v) => (v === null ? 'NULL' : v))).join(',')}}`;
}

const ELEMENT: Record<NumericArrayType, { oid: number; size: number }> = {
  'int4[]': { oid: 23, size: 4 },
  'float8[]': { oid: 701, size: 8 },
  'boolean[]': { oid: 16, size: 1 },
};

/**
 * As PostgreSQL's binary array format (array_send): the driver sends a Buffer parameter as binary,
 * and PostgreSQL reads the numbers without parsing text. undefined when an int4 element is not a
 * 32-bit integer (or an element is not of the type): the literal then lets PostgreSQL refuse it as
 * it always did.
 */
export function binaryArray(
  values: readonly (number | boolean | null)[],
  type: NumericArrayType,
): Buffer | undefined {
  const { oid, size } = ELEMENT[type];
  let nulls = 0;
  const kind = type === 'boolean[]' ? 'boolean' : 'number';
  for (const v of values) {
    if (v === null) nulls++;
    else if (typeof v !== kind) return undefined;
    else if (type === 'int4[]' && (v as number) !== ((v as number) | 0)) return undefined;
  }
  if (!values.length) {
    const empty = Buffer.alloc(12);
    empty.writeInt32BE(oid, 8); // no dimensions, no nulls
    return empty;
  }
  const out = Buffer.allocUnsafe(20 + 4 * values.length + size * (values.length - nulls));
  // A DataView rather than the Buffer's write methods: those check their arguments on every call,
  // and took most of the time.
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setInt32(0, 1); // dimensions (big-endian, as every setter here)
  view.setInt32(4, nulls ? 1 : 0);
  view.setInt32(8, oid);
  view.setInt32(12, values.length);
  view.setInt32(16, 1); // lower bound
  let o = 20;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null) {
      view.setInt32(o, -1);
      o += 4;
      continue;
    }
    view.setInt32(o, size);
    // -0 as 0, as a literal writes it (String(-0) is '0'), so both databases store the same.
    if (type === 'float8[]') view.setFloat64(o + 4, (v as number) + 0);
    else if (type === 'int4[]') view.setInt32(o + 4, v as number);
    else view.setUint8(o + 4, v ? 1 : 0);
    o += 4 + size;
  }
  return out;
}

/** Whether the database takes binary array parameters: PostgreSQL does, PGlite does not. */
export const takesBinary = (db: object): boolean => (db as { kind?: string }).kind === 'postgres';

/** The parameter for PostgreSQL (binary) or PGlite (a literal: it takes no binary parameters). */
export function numericArray(
  values: readonly (number | boolean | null)[],
  type: NumericArrayType,
  binary: boolean,
): string | Buffer {
  return (binary && binaryArray(values, type)) || arrayLiteral(values);
}
