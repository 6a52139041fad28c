import { deflateSync } from 'node:zlib';

const CRC = new Uint32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buf: Buffer) => {
  let c = 0xffffffff;
  for (const b of buf) c = CRC[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

type Rgb = [number, number, number];

/**
 * A drawn haul ticket as a phone would photograph it: a paper slip on a desk, a printed header,
 * lines of text (their lengths depend on `seed`) and a stamp.
 */
export function makeTicketPng(width: number, height: number, seed: number): Buffer {
  return cached(`ticket:${width}:${height}:${seed}`, () => drawTicket(width, height, seed));
}

function drawTicket(width: number, height: number, seed: number): Buffer {
  const [l, r, t, b] = [0.12 * width, 0.88 * width, 0.06 * height, 0.94 * height];
  const line = Math.max(4, Math.round(height / 22));
  const stamp = { x: 0.7 * width, y: 0.78 * height, r: 0.08 * width };
  return encodePng(width, height, (x, y) => {
    if (x < l || x > r || y < t || y > b) {
      const grain = ((x * 7 + y * 13 + seed) % 11) - 5;
      return [118 + grain, 86 + grain, 58 + grain]; // the desk
    }
    const d = Math.hypot(x - stamp.x, y - stamp.y);
    if (d < stamp.r && d > stamp.r * 0.8) return [190, 40, 40]; // the stamp's ring
    const row = Math.floor((y - t) / line);
    if (row === 1 && x < l + (r - l) * 0.6) return [30, 30, 30]; // the header
    const inText = row >= 3 && row % 2 === 1 && (y - t) % line < line * 0.6;
    const length = 0.35 + (((row * 31 + seed * 17) % 50) / 100) * 1.0;
    if (inText && x > l + 0.05 * (r - l) && x < l + length * (r - l)) return [60, 60, 70];
    return [246, 244, 236]; // the paper
  });
}

/** A drawn motion-camera frame: sky, yard, a tank truck (its place and colour from `seed`), a time bar. */
export function makeMotionPng(width: number, height: number, seed: number): Buffer {
  return cached(`motion:${width}:${height}:${seed}`, () => drawMotion(width, height, seed));
}

function cached(key: string, draw: () => Buffer): Buffer {
  let png = drawn.get(key);
  if (!png) drawn.set(key, (png = draw()));
  return png;
}

function drawMotion(width: number, height: number, seed: number): Buffer {
  const horizon = 0.45 * height;
  const truckX = (0.1 + ((seed * 37) % 40) / 100) * width;
  const cab: Rgb = [
    [180, 30, 30],
    [30, 80, 160],
    [230, 200, 40],
    [240, 240, 240],
  ][seed % 4] as Rgb;
  const wheelY = 0.8 * height;
  const wheelR = 0.045 * height;
  const wheels = [0.05, 0.22, 0.38].map((f) => truckX + f * width);
  return encodePng(width, height, (x, y) => {
    if (y < 0.06 * height) return x % 14 < 9 && x < 0.5 * width ? [230, 230, 230] : [10, 10, 10];
    if (wheels.some((w) => Math.hypot(x - w, y - wheelY) < wheelR)) return [20, 20, 20];
    const inTank = x > truckX && x < truckX + 0.3 * width && y > 0.55 * height && y < wheelY;
    if (inTank) return [170 + (y % 7), 175 + (y % 7), 180 + (y % 7)];
    const inCab =
      x >= truckX + 0.3 * width && x < truckX + 0.42 * width && y > 0.6 * height && y < wheelY;
    if (inCab) return y < 0.66 * height && x > truckX + 0.33 * width ? [60, 90, 110] : cab;
    if (y < horizon) return [110 + (y * 100) / horizon, 160 + (y * 60) / horizon, 220];
    const grain = ((x * 5 + y * 11 + seed) % 9) - 4;
    return [150 + grain, 140 + grain, 120 + grain]; // gravel
  });
}

/** Drawn images by their arguments: the demo shows a few of each, and tests generate the demo often. */
const drawn = new Map<string, Buffer>();

function encodePng(width: number, height: number, pixel: (x: number, y: number) => Rgb): Buffer {
  const stride = width * 3 + 1;
  const raw = Buffer.alloc(stride * height);
  // Drawn on a grid of 2×2 blocks (a quarter of the calls; the shapes are plain enough), each
  // odd row a copy of the one above.
  for (let y = 0; y < height; y++) {
    const row = y * stride;
    raw[row] = 0; // filter: none
    if (y % 2 === 1) {
      raw.copy(raw, row + 1, row - stride + 1, row);
      continue;
    }
    for (let x = 0; x < width; x += 2) {
      const [r, g, b] = pixel(x, y);
      for (let i = row + 1 + x * 3, end = Math.min(i + 6, row + stride); i < end; i += 3) {
        raw[i] = r; // a Buffer rounds down: every colour here is 0-255
        raw[i + 1] = g;
        raw[i + 2] = b;
      }
    }
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
