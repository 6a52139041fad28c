// Rows of numbers as binary float8: the database sends each as its 8 bytes (float8send, joined into
// one bytea per statement or equipment) rather than as text. Converting a float to text costs the
// database a shortest-digits search per value and the client a parse; for the tens of thousands of
// numbers of a time-weighted page or of plot values that was most of the work.

/** SQL: the expressions as one bytea of big-endian float8 (NaN for null). */
export const float8Bytes = (exprs: string[]): string =>
  exprs.map((x) => `float8send(coalesce((${x})::float8, 'NaN'::float8))`).join(' || ');

/** The values of float8Bytes' bytes (none for null: an aggregate of no rows). */
export function readFloat8(bytes: Uint8Array | null): Float64Array {
  if (!bytes) return new Float64Array(0);
  if (bytes.byteLength % 8) throw new Error('float8 rows: not a whole number of values');
  const n = bytes.byteLength / 8;
  const out = new Float64Array(n);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < n; i++) out[i] = view.getFloat64(8 * i);
  return out;
}
