import type { Access } from '../../auth/access.js';
import { requireEquipment } from '../../auth/access.js';
import { numericArray, takesBinary, type NumericArrayType } from '../../db/array-params.js';
import type { Queryable } from '../../db/index.js';
import type { Values } from '../../export/records.js';
import { isoTime, parseRange } from '../../time.js';
import { float8Bytes, readFloat8 } from './float8-rows.js';
import type { Download } from './index.js';

// Plot values (contract 13): [start, end) cut into `intervals` equal parts; of each part its first,
// last, lowest and highest sample (stored samples, each once). A part is covered by the coarsest
// clean rollups that nest in it (days, hours, quarters: each carries its first, last, lowest and
// highest sample with their times, units.ts) and by logs only where no rollup fits: the part's edges
// finer than a quarter and quarters marked stale (contract 6). So a year in 1,000 parts reads about
// ten rollup rows a part, not the year's logs.

export interface PlotBody {
  sensorId: number;
  start: string;
  end: string;
  intervals: number;
}

export const PLOT_FIELDS = ['sensorID', 'timestamp', 'value'];
const MAX_DAYS = 366;
const Q = 15 * 60_000;
const H = 60 * 60_000;
const D = 24 * H;
const LEVEL: Record<number, number> = { [Q]: 15, [H]: 60, [D]: 1440 };
const BELOW: Record<number, number> = { [D]: H, [H]: Q };
const floorTo = (t: number, w: number) => Math.floor(t / w) * w;
const ceilTo = (t: number, w: number) => Math.ceil(t / w) * w;

/** One source of a part: rollups of a level (minutes) or logs (0) over [a, b). */
type Segment = [level: number, a: number, b: number, part: number];

/** The segments covering the parts, given the stale quarters (epoch ms, ascending). */
export function planSegments(start: number, end: number, n: number, stale: number[]): Segment[] {
  const width = Math.floor((end - start) / n);
  const out: Segment[] = [];
  const staleIn = (a: number, b: number) => {
    let lo = 0;
    let hi = stale.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (stale[mid] < a) lo = mid + 1;
      else hi = mid;
    }
    const found: number[] = [];
    for (let i = lo; i < stale.length && stale[i] < b; i++) found.push(stale[i]);
    return found;
  };
  /** Rollups of width w over [a, b) (aligned), the stale ones replaced by the level below. */
  const rollups = (w: number, a: number, b: number, part: number) => {
    if (a >= b) return;
    const bad = [...new Set(staleIn(a, b).map((q) => floorTo(q, w)))];
    let from = a;
    for (const u of bad) {
      if (u > from) out.push([LEVEL[w], from, u, part]);
      if (w === Q) out.push([0, u, u + Q, part]);
      else rollups(BELOW[w], u, u + w, part);
      from = u + w;
    }
    if (from < b) out.push([LEVEL[w], from, b, part]);
  };
  /** Whole quarters [x, y): days where they fit, hours at their edges, then quarters. */
  const cover = (x: number, y: number, k: number) => {
    const [h1, h2] = [ceilTo(x, H), floorTo(y, H)];
    if (h1 >= h2) return rollups(Q, x, y, k);
    rollups(Q, x, h1, k);
    rollups(Q, h2, y, k);
    const [d1, d2] = [ceilTo(h1, D), floorTo(h2, D)];
    if (d1 >= d2) return rollups(H, h1, h2, k);
    rollups(H, h1, d1, k);
    rollups(D, d1, d2, k);
    rollups(H, d2, h2, k);
  };
  for (let k = 0; k < n; k++) {
    const a = start + k * width;
    const b = k === n - 1 ? end : a + width;
    if (a >= b) continue;
    const s15 = ceilTo(a, Q);
    const e15 = floorTo(b, Q);
    if (s15 >= e15) {
      out.push([0, a, b, k]);
      continue;
    }
    if (a < s15) out.push([0, a, s15, k]);
    cover(s15, e15, k);
    if (e15 < b) out.push([0, e15, b, k]);
  }
  return out;
}

const ms = (c: string) => `round(date_part('epoch', ${c}) * 1000)`;
// The rows of each part go to the service as binary float8 (float8-rows.ts), which takes each part's
// first, last, lowest and highest sample from them: for the 20,000 rows of a year in 1,000 parts that
// is several times cheaper than the database's min and max over [time, value] arrays (an array made
// and compared per row). Rollup segments and log segments are two statements, sent at once on two
// connections (two cores). OFFSET 0 keeps each lateral a lookup per segment (pulled up into a join,
// it was planned as a scan of every row of the sensor's level: seconds).
/** A rollup row: part, first and last sample, lowest and highest (time, value each). */
const ROLLUP_WIDTH = 9;
const ROLLUP_SQL = `SELECT string_agg(${float8Bytes([
  's.part',
  ms('r.first_ts'),
  'r.v_first',
  ms('r.last_ts'),
  'r.v_last',
  ms('r.v_tmin'),
  'r.v_min',
  ms('r.v_tmax'),
  'r.v_max',
])}, ''::bytea) AS nums
  FROM unnest($2::int[], $3::float8[], $4::float8[], $5::int[]) AS s(level, a, b, part)
  CROSS JOIN LATERAL (
    SELECT r.first_ts, r.v_first, r.last_ts, r.v_last, r.v_min, r.v_tmin, r.v_max, r.v_tmax FROM sensor_rollups r
     WHERE r.sensor_id = $1 AND r.level = s.level AND r.bucket >= to_timestamp(s.a / 1000) AND r.bucket < to_timestamp(s.b / 1000) OFFSET 0) r`;
/** A log row: part, time, value. */
const LOG_WIDTH = 3;
// A log segment [a, b) of part `part`, or where two parts meet inside a quarter, the logs of both
// sides of the boundary `split` in one lookup: before it of `part`, from it on of the next part.
const LOG_SQL = `SELECT string_agg(${float8Bytes([
  'CASE WHEN g.ts < to_timestamp(s.split / 1000) THEN s.part ELSE s.part + 1 END',
  ms('g.ts'),
  'g.value',
])}, ''::bytea) AS nums
  FROM unnest($2::float8[], $3::float8[], $4::float8[], $5::int[]) AS s(split, a, b, part)
  CROSS JOIN LATERAL (
    SELECT g.ts, g.value FROM sensor_logs g
     WHERE g.sensor_id = $1 AND g.ts >= to_timestamp(s.a / 1000) AND g.ts < to_timestamp(s.b / 1000) OFFSET 0) g`;

/** The log segments as [split, a, b, part]: adjacent ones of consecutive parts joined at their boundary. */
function logLookups(segments: Segment[]): [number, number, number, number][] {
  const out: [number, number, number, number][] = [];
  for (const [level, a, b, part] of segments) {
    if (level !== 0) continue;
    const last = out[out.length - 1];
    if (last && last[2] === a && last[3] + 1 === part && last[0] === last[2]) {
      last[2] = b;
      continue;
    }
    out.push([b, a, b, part]);
  }
  return out;
}

/**
 * Each part's extremes: per part eight numbers, the time and value of its first, last, lowest and
 * highest sample (lowest: the earliest of equal values, highest: the earliest too), NaN times where
 * the part has no sample.
 */
class Extremes {
  readonly x: Float64Array;
  constructor(readonly parts: number) {
    this.x = new Float64Array(8 * parts).fill(NaN);
  }

  /** A row's samples for part k: first (t1, v1), last (t2, v2), lowest (tl, vl), highest (th, vh). */
  add(
    k: number,
    t1: number,
    v1: number,
    t2: number,
    v2: number,
    tl: number,
    vl: number,
    th: number,
    vh: number,
  ): void {
    const x = this.x;
    const o = 8 * k;
    if (Number.isNaN(x[o])) {
      x[o] = t1;
      x[o + 1] = v1;
      x[o + 2] = t2;
      x[o + 3] = v2;
      x[o + 4] = tl;
      x[o + 5] = vl;
      x[o + 6] = th;
      x[o + 7] = vh;
      return;
    }
    if (t1 < x[o]) {
      x[o] = t1;
      x[o + 1] = v1;
    }
    if (t2 > x[o + 2]) {
      x[o + 2] = t2;
      x[o + 3] = v2;
    }
    if (vl < x[o + 5] || (vl === x[o + 5] && tl < x[o + 4])) {
      x[o + 4] = tl;
      x[o + 5] = vl;
    }
    if (vh > x[o + 7] || (vh === x[o + 7] && th < x[o + 6])) {
      x[o + 6] = th;
      x[o + 7] = vh;
    }
  }
}

/** Checks the request (400/404/403) and returns its records. */
export async function openPlot(db: Queryable, access: Access, body: PlotBody): Promise<Download> {
  const { start, end } = parseRange(body.start, body.end, MAX_DAYS);
  await requireEquipment(db, access, 'sensor', [body.sensorId]);
  const stale = (
    await db.query<{ b: number }>(
      `SELECT ${ms('bucket')} AS b FROM rollup_dirty WHERE kind = 1 AND equipment_id = $1
         AND bucket >= $2::timestamptz - interval '15 minutes' AND bucket < $3::timestamptz ORDER BY bucket`,
      [body.sensorId, new Date(start).toISOString(), new Date(end).toISOString()],
    )
  ).map((r) => Number(r.b));
  const segments = planSegments(start, end, body.intervals, stale);
  const binary = takesBinary(db);
  const run = async (sql: string, types: NumericArrayType[], list: number[][]) =>
    list.length === 0
      ? new Float64Array(0)
      : readFloat8(
          (
            await db.query<{ nums: Uint8Array | null }>(
              sql,
              [
                body.sensorId,
                ...types.map((type, i) =>
                  numericArray(
                    list.map((s) => s[i]),
                    type,
                    binary,
                  ),
                ),
              ],
              { indexOrder: true },
            )
          )[0].nums,
        );
  const [rollups, logs] = await Promise.all([
    run(
      ROLLUP_SQL,
      ['int4[]', 'float8[]', 'float8[]', 'int4[]'],
      segments.filter((s) => s[0] > 0),
    ),
    run(LOG_SQL, ['float8[]', 'float8[]', 'float8[]', 'int4[]'], logLookups(segments)),
  ]);
  const parts = new Extremes(body.intervals);
  const r = rollups;
  for (let o = 0; o < r.length; o += ROLLUP_WIDTH)
    parts.add(r[o], r[o + 1], r[o + 2], r[o + 3], r[o + 4], r[o + 5], r[o + 6], r[o + 7], r[o + 8]);
  for (let o = 0; o < logs.length; o += LOG_WIDTH) {
    const t = logs[o + 1];
    const v = logs[o + 2];
    parts.add(logs[o], t, v, t, v, t, v, t, v);
  }
  const records: Values[] = [];
  for (let k = 0; k < body.intervals; k++) {
    const o = 8 * k;
    const x = parts.x;
    if (Number.isNaN(x[o])) continue;
    // The part's first, last, lowest and highest sample, each once, in time order: first, then the
    // lowest and highest (either order), then last; each may be another's sample.
    const [lo, hi] = x[o + 4] <= x[o + 6] ? [o + 4, o + 6] : [o + 6, o + 4];
    let previous = NaN;
    for (const j of [o, lo, hi, o + 2]) {
      if (x[j] === previous) continue;
      previous = x[j];
      records.push([body.sensorId, isoTime(x[j]), x[j + 1]]);
    }
  }
  async function* pages(): AsyncGenerator<Values[]> {
    yield records;
  }
  return { fields: PLOT_FIELDS, pages: pages() };
}
