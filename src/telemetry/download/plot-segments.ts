// Where plot values (plot.ts) read each part of [start, end) from: the coarsest clean rollups that
// nest in it (days, hours, quarters: each carries its first, last, lowest and highest sample with
// their times, units.ts) and logs only where no rollup fits: the part's edges finer than a quarter
// and quarters marked stale (contract 6). So a year in 1,000 parts reads about ten rollup rows a
// part, not the year's logs.

const Q = 15 * 60_000;
const H = 60 * 60_000;
const D = 24 * H;
const LEVEL: Record<number, number> = { [Q]: 15, [H]: 60, [D]: 1440 };
const BELOW: Record<number, number> = { [D]: H, [H]: Q };
const floorTo = (t: number, w: number) => Math.floor(t / w) * w;
const ceilTo = (t: number, w: number) => Math.ceil(t / w) * w;

/** One source of a part: rollups of a level (minutes) or logs (0) over [a, b). */
export type Segment = [level: number, a: number, b: number, part: number];

/** A lookup of logs: [a, b) of part `part`, the times from `split` on belonging to the next part. */
export type LogLookup = [split: number, a: number, b: number, part: number];

/** The stale quarters of `stale` (epoch ms, ascending) in [a, b). */
function staleIn(stale: number[], a: number, b: number): number[] {
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
}

/** The segments covering the `n` parts, given the stale quarters (epoch ms, ascending). */
export function planSegments(start: number, end: number, n: number, stale: number[]): Segment[] {
  const width = Math.floor((end - start) / n);
  const out: Segment[] = [];
  /** Rollups of width w over [a, b) (aligned), the stale ones replaced by the level below. */
  const rollups = (w: number, a: number, b: number, part: number) => {
    if (a >= b) return;
    const bad = [...new Set(staleIn(stale, a, b).map((q) => floorTo(q, w)))];
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

/**
 * The log segments as lookups: where two parts meet inside a quarter, the log segments on both
 * sides of the boundary are one lookup (split at the boundary), not two.
 */
export function logLookups(segments: Segment[]): LogLookup[] {
  const out: LogLookup[] = [];
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
