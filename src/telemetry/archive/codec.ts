import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { EQUIPMENT } from '../../equipment.js';
import { KINDS, type ColumnType, type TelemetryKind } from '../kinds.js';
import { ByteReader, ByteWriter } from './bytes.js';
import {
  cheaperOrder,
  decimalScale,
  isSequenceInt,
  MAX_SCALE,
  readBits,
  readInts,
  readXor,
  scaled,
  unscaled,
  writeBits,
  writeInts,
  writeXor,
} from './sequences.js';

// The archive codec: one equipment's logs of one kind over one day (any span, in fact) as one
// Buffer, and back, losslessly. Pure and synchronous; the layout byte by byte and the argument that
// decode(encode(x)) is x bit for bit are in docs/storage.md.
//
// Input rules (a RangeError otherwise, nothing is ever rounded or reordered):
// - ts: epoch milliseconds, whole numbers within ±2^50 (years -33,700 to 37,600), strictly
//   increasing (the caller sorts: a log's key is (equipment, ts), so no two are equal);
// - columns: one array per field of KINDS[kind].fields, in that order, each as long as ts; a value
//   is null or of its column's type: float8 any number; bool a boolean; int4 a 32-bit integer
//   (not -0); timestamptz epoch milliseconds like ts (not -0); text a well-formed string.

export const ARCHIVE_VERSION = 1;
/** Chosen on bench/storage's data (docs/storage.md): level 1 took 1 % more bytes, level 9 0.2 % fewer but slower. */
export const DEFAULT_LEVEL = 6;

export type ArchiveValue = number | boolean | string | null;

export interface ArchiveDay {
  ts: number[];
  columns: ArchiveValue[][];
}

/** The byte before each column: every value present, none, or a bitmap of which follows. */
const Presence = { All: 0, None: 1, Bitmap: 2 } as const;
/** Bits of the third header byte. */
const Flags = { Deflated: 1 } as const;
/** Scale byte of a float8 column whose values are stored as XOR'd bits, not as scaled decimals. */
const XOR = 0xff;

export function encodeDay(
  kind: TelemetryKind,
  day: ArchiveDay,
  { level = DEFAULT_LEVEL }: { level?: number } = {},
): Buffer {
  const { fields } = KINDS[kind];
  const { ts, columns } = day;
  const n = ts.length;
  if (columns.length !== fields.length)
    throw new RangeError(`${kind} logs have ${fields.length} value columns, not ${columns.length}`);
  checkTimes(ts, 'ts', true);

  const w = new ByteWriter(64 + n * 2);
  w.uint(n);
  writeInts(w, ts, 2);
  fields.forEach((field, c) => {
    const col = columns[c];
    if (col.length !== n)
      throw new RangeError(`column ${field.column}: ${col.length} values for ${n} times`);
    const present: ArchiveValue[] = [];
    for (const v of col) if (v !== null) present.push(v);
    if (!present.length) w.byte(Presence.None);
    else if (present.length === n) w.byte(Presence.All);
    else {
      w.byte(Presence.Bitmap);
      writeBits(
        w,
        col.map((v) => v !== null),
      );
    }
    if (present.length) writeColumn(w, field.type, field.column, present);
  });

  const body = w.view();
  const packed = level > 0 ? deflateRawSync(body, { level }) : undefined;
  const deflated = packed !== undefined && packed.length < body.length;
  const payload = deflated ? packed : body;
  const out = Buffer.allocUnsafe(3 + payload.length);
  out[0] = ARCHIVE_VERSION;
  out[1] = EQUIPMENT[kind].code;
  out[2] = deflated ? Flags.Deflated : 0;
  out.set(payload, 3);
  return out;
}

export function decodeDay(kind: TelemetryKind, data: Uint8Array): ArchiveDay {
  if (data.length < 3) throw new RangeError('archive data ends early');
  if (data[0] !== ARCHIVE_VERSION) throw new RangeError(`archive version ${data[0]} is not known`);
  if (data[1] !== EQUIPMENT[kind].code)
    throw new RangeError(`archive data of kind code ${data[1]}, not of ${kind} logs`);
  if (data[2] & ~Flags.Deflated) throw new RangeError(`archive flags ${data[2]} are not known`);
  const payload = data.subarray(3);
  const r = new ByteReader(data[2] & Flags.Deflated ? inflateRawSync(payload) : payload);
  const n = r.uint();
  // Each time after the first takes a byte at least: a count beyond that is damage, refused before
  // any array of that length is made.
  if (n > r.remaining()) throw new RangeError('archive data ends early');
  const ts = readInts(r, n);
  const columns = KINDS[kind].fields.map((field) => {
    const presence = r.byte();
    if (presence === Presence.None) return new Array<ArchiveValue>(n).fill(null);
    if (presence === Presence.All) return readColumn(r, field.type, n);
    if (presence !== Presence.Bitmap) throw new RangeError(`archive presence ${presence}`);
    const has = readBits(r, n);
    const present = readColumn(r, field.type, has.filter(Boolean).length);
    let j = 0;
    return has.map((h) => (h ? present[j++] : null));
  });
  if (!r.done()) throw new RangeError('archive data has bytes past its end');
  return { ts, columns };
}

function checkTimes(values: ArrayLike<unknown>, column: string, increasing: boolean): void {
  for (let i = 0; i < values.length; i++) {
    const t = values[i];
    if (typeof t !== 'number' || !isSequenceInt(t))
      throw new RangeError(`${column}[${i}]: not a whole number of milliseconds within ±2^50`);
    if (increasing && i > 0 && t <= (values[i - 1] as number))
      throw new RangeError(`${column}[${i}]: times must be strictly increasing`);
  }
}

function writeColumn(
  w: ByteWriter,
  type: ColumnType,
  column: string,
  values: ArchiveValue[],
): void {
  const bad = (i: number, what: string) => new RangeError(`${column} value ${i}: not ${what}`);
  switch (type) {
    case 'float8': {
      values.forEach((v, i) => {
        if (typeof v !== 'number') throw bad(i, 'a number');
      });
      const nums = values as number[];
      const k = decimalScale(nums);
      if (k < 0) {
        w.byte(XOR);
        writeXor(w, nums);
      } else {
        w.byte(k);
        const ints = scaled(nums, k);
        writeInts(w, ints, cheaperOrder(ints));
      }
      return;
    }
    case 'int4':
      values.forEach((v, i) => {
        if (typeof v !== 'number' || (v | 0) !== v || Object.is(v, -0))
          throw bad(i, 'a 32-bit integer');
      });
      writeInts(w, values as number[], 1);
      return;
    case 'timestamptz': {
      checkTimes(values, column, false);
      const ints = values as number[];
      writeInts(w, ints, cheaperOrder(ints));
      return;
    }
    case 'bool':
      values.forEach((v, i) => {
        if (typeof v !== 'boolean') throw bad(i, 'a boolean');
      });
      writeBits(w, values as boolean[]);
      return;
    case 'text': {
      // A dictionary of the day's distinct strings (UTF-8), then each value's index in it.
      const index = new Map<string, number>();
      const ids = values.map((v, i) => {
        if (typeof v !== 'string') throw bad(i, 'a string');
        let id = index.get(v);
        if (id === undefined) index.set(v, (id = index.size));
        return id;
      });
      w.uint(index.size);
      for (const s of index.keys()) {
        const utf8 = Buffer.from(s, 'utf8');
        if (utf8.toString('utf8') !== s)
          throw new RangeError(`${column}: a string that is not well-formed Unicode`);
        w.uint(utf8.length);
        w.bytes(utf8);
      }
      for (const id of ids) w.uint(id);
      return;
    }
  }
}

function readColumn(r: ByteReader, type: ColumnType, n: number): ArchiveValue[] {
  switch (type) {
    case 'float8': {
      const k = r.byte();
      if (k === XOR) return readXor(r, n);
      if (k > MAX_SCALE) throw new RangeError(`archive decimal scale ${k}`);
      return unscaled(readInts(r, n), k);
    }
    case 'int4':
    case 'timestamptz':
      return readInts(r, n);
    case 'bool':
      return readBits(r, n);
    case 'text': {
      const dict = Array.from({ length: r.uint() }, () =>
        Buffer.from(r.bytes(r.uint())).toString('utf8'),
      );
      return Array.from({ length: n }, () => {
        const s = dict[r.uint()];
        if (s === undefined) throw new RangeError('archive text index out of range');
        return s;
      });
    }
  }
}
