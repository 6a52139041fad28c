// The byte level of the archive codec (codec.ts): a growing writer and a bounded reader of bytes and
// unsigned LEB128 varints. Varints carry whole numbers up to 2^53 (8 bytes at most), done with
// arithmetic above 2^31 so that no bit of a safe integer is lost to JavaScript's 32-bit operators.

/** Largest value a varint may carry (zigzag of a difference of two values within ±2^51). */
const VARINT_MAX = 2 ** 53;

/** Zigzag: 0, -1, 1, -2… as 0, 1, 2, 3…, exact for |d| ≤ 2^52. */
export const zigzag = (d: number): number => (d >= 0 ? 2 * d : -2 * d - 1);
export const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

export class ByteWriter {
  private buf: Uint8Array;
  pos = 0;

  constructor(capacity = 256) {
    this.buf = new Uint8Array(capacity);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** An unsigned varint: 0 ≤ v ≤ 2^53, a whole number (checked by the callers' bounds). */
  uint(v: number): void {
    this.ensure(8);
    const buf = this.buf;
    while (v >= 0x80000000) {
      buf[this.pos++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    while (v >= 0x80) {
      buf[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    buf[this.pos++] = v;
  }

  /** The bytes written, as a view (no copy). */
  view(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

/** Bytes a varint of v takes (for choosing between encodings without writing them). */
export const uintLength = (v: number): number =>
  v < 0x80
    ? 1
    : v < 0x4000
      ? 2
      : v < 0x200000
        ? 3
        : v < 0x10000000
          ? 4
          : 4 + uintLength(Math.floor(v / 0x10000000));

export class ByteReader {
  pos = 0;

  constructor(private readonly buf: Uint8Array) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new RangeError('archive data ends early');
  }

  byte(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  bytes(n: number): Uint8Array {
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  uint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (result > VARINT_MAX) throw new RangeError('archive varint out of range');
        return result;
      }
      scale *= 128;
    }
    throw new RangeError('archive varint too long');
  }

  /** Bytes not read yet. */
  remaining(): number {
    return this.buf.length - this.pos;
  }

  /** Whether every byte was read. */
  done(): boolean {
    return this.pos === this.buf.length;
  }
}
