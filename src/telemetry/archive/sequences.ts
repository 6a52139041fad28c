import { ByteReader, ByteWriter, uintLength, unzigzag, zigzag } from './bytes.js';

// The sequences the archive codec (codec.ts) stores a column's present values as. Each one is
// exactly reversible; the exactness argument of each is in docs/storage.md.

/** Whole numbers a sequence holds are within ±2^50, so second differences (±2^52) zigzag exactly. */
export const INT_LIMIT = 2 ** 50;
/** Largest decimal scale tried: 10^k is exact in float8 up to k = 22; 15 digits is all a float8 holds. */
export const MAX_SCALE = 15;
const POW10 = Array.from({ length: MAX_SCALE + 1 }, (_, k) => 10 ** k);

/** Whether v is a whole number within ±2^50 and not -0 (which a difference would lose). */
export const isSequenceInt = (v: number): boolean =>
  Number.isInteger(v) && Math.abs(v) <= INT_LIMIT && !Object.is(v, -0);

/**
 * Whole numbers as differences of the given order: the first value, then (order 1) each difference
 * from the one before, or (order 2) the first difference and then each difference's change, zigzag
 * varints. The order is written first, so a reader needs nothing else.
 */
export function writeInts(w: ByteWriter, ints: ArrayLike<number>, order: 1 | 2): void {
  w.byte(order);
  const n = ints.length;
  if (!n) return;
  let prev = ints[0];
  let delta = 0;
  w.uint(zigzag(prev));
  for (let i = 1; i < n; i++) {
    const d = ints[i] - prev;
    w.uint(zigzag(order === 1 ? d : d - delta));
    delta = d;
    prev = ints[i];
  }
}

export function readInts(r: ByteReader, n: number): number[] {
  const order = r.byte();
  if (order !== 1 && order !== 2) throw new RangeError(`archive sequence order ${order}`);
  const out = new Array<number>(n);
  if (!n) return out;
  let prev = unzigzag(r.uint());
  let delta = 0;
  out[0] = prev;
  for (let i = 1; i < n; i++) {
    const z = unzigzag(r.uint());
    delta = order === 1 ? z : delta + z;
    prev += delta;
    out[i] = prev;
  }
  return out;
}

/** The order (1 or 2) whose differences take fewer bytes. */
export function cheaperOrder(ints: ArrayLike<number>): 1 | 2 {
  let one = 0;
  let two = 0;
  let delta = 0;
  for (let i = 1; i < ints.length; i++) {
    const d = ints[i] - ints[i - 1];
    one += uintLength(zigzag(d));
    two += uintLength(zigzag(i === 1 ? d : d - delta));
    delta = d;
  }
  return two < one ? 2 : 1;
}

/**
 * The smallest scale k (0…MAX_SCALE) at which every value v is m / 10^k for a whole number m within
 * ±2^50, m = Math.round(v × 10^k) + 0: the decoder computes the same division, so it gives v back
 * bit for bit. The check is Object.is, so -0 never passes (m is never -0). -1 when no scale does.
 */
export function decimalScale(values: ArrayLike<number>): number {
  let k = 0;
  let p = 1;
  for (let i = 0; i < values.length;) {
    const v = values[i];
    const m = Math.round(v * p) + 0;
    if (Math.abs(m) <= INT_LIMIT && Object.is(m / p, v)) {
      i++;
      continue;
    }
    // A value needs more digits: every value is checked again at the next scale.
    if (++k > MAX_SCALE) return -1;
    p = POW10[k];
    i = 0;
  }
  return k;
}

/** The whole numbers m of decimalScale at scale k. */
export function scaled(values: ArrayLike<number>, k: number): number[] {
  const p = POW10[k];
  return Array.from(values, (v) => Math.round(v * p) + 0);
}

export const unscaled = (ints: number[], k: number): number[] => {
  const p = POW10[k];
  for (let i = 0; i < ints.length; i++) ints[i] = ints[i] / p;
  return ints;
};

const scratch = new DataView(new ArrayBuffer(8));

/**
 * Any float8 values, bit for bit (-0, subnormals, infinities; a NaN comes back a NaN, whose payload
 * JavaScript does not keep anyway): each value's IEEE 754 bits XOR'd
 * with the previous value's (the first with 0), as Gorilla does, but byte-aligned: a header byte
 * (leading zero bytes << 4 | trailing zero bytes; 0x80 for an unchanged value) and the bytes between,
 * most significant first. Deflate afterwards takes out most of what bit packing would.
 */
export function writeXor(w: ByteWriter, values: ArrayLike<number>): void {
  let prevHi = 0;
  let prevLo = 0;
  for (let i = 0; i < values.length; i++) {
    scratch.setFloat64(0, values[i]);
    const hi = scratch.getUint32(0);
    const lo = scratch.getUint32(4);
    const xHi = (hi ^ prevHi) >>> 0;
    const xLo = (lo ^ prevLo) >>> 0;
    prevHi = hi;
    prevLo = lo;
    if (xHi === 0 && xLo === 0) {
      w.byte(0x80);
      continue;
    }
    scratch.setUint32(0, xHi);
    scratch.setUint32(4, xLo);
    let lead = 0;
    while (scratch.getUint8(lead) === 0) lead++;
    let trail = 0;
    while (scratch.getUint8(7 - trail) === 0) trail++;
    w.byte((lead << 4) | trail);
    for (let b = lead; b < 8 - trail; b++) w.byte(scratch.getUint8(b));
  }
}

export function readXor(r: ByteReader, n: number): number[] {
  const out = new Array<number>(n);
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < n; i++) {
    const header = r.byte();
    if (header !== 0x80) {
      const lead = header >> 4;
      const trail = header & 0x0f;
      if (lead + trail >= 8) throw new RangeError('archive XOR header out of range');
      scratch.setUint32(0, 0);
      scratch.setUint32(4, 0);
      for (let b = lead; b < 8 - trail; b++) scratch.setUint8(b, r.byte());
      hi = (hi ^ scratch.getUint32(0)) >>> 0;
      lo = (lo ^ scratch.getUint32(4)) >>> 0;
    }
    scratch.setUint32(0, hi);
    scratch.setUint32(4, lo);
    out[i] = scratch.getFloat64(0);
  }
  return out;
}

/** Booleans, eight to a byte, the first in the lowest bit. */
export function writeBits(w: ByteWriter, bits: ArrayLike<boolean>): void {
  for (let i = 0; i < bits.length; i += 8) {
    let b = 0;
    for (let j = 0; j < 8 && i + j < bits.length; j++) if (bits[i + j]) b |= 1 << j;
    w.byte(b);
  }
}

export function readBits(r: ByteReader, n: number): boolean[] {
  const bytes = r.bytes(Math.ceil(n / 8));
  return Array.from({ length: n }, (_, i) => (bytes[i >> 3] & (1 << (i & 7))) !== 0);
}
