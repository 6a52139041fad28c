// The reference of the historian suites (contract 13), computed from the samples a test sent: the
// value function, its integral over any interval, interpolated values and plot values.

export interface Pt {
  t: number;
  v: number;
}

/** The stored series: the last sent value of each time wins, ascending. */
export function stored(sent: Pt[]): Pt[] {
  const m = new Map<number, number>();
  for (const p of sent) m.set(p.t, p.v);
  return [...m].map(([t, v]) => ({ t, v })).sort((a, b) => a.t - b.t);
}

/**
 * One record per time, the last sent: what one upload request holds in these tests (replacing records
 * go in a later request; within one request the contract does not order records of the same key).
 */
export const lastPerTime = (pts: Pt[]): Pt[] => [
  ...new Map(pts.map((p) => [p.t, p] as const)).values(),
];

/** v(t), or null outside [first, last]. */
export function valueAt(s: Pt[], t: number, step: boolean): number | null {
  if (!s.length || t < s[0].t || t > s[s.length - 1].t) return null;
  let lo = 0;
  let hi = s.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (s[mid].t <= t) lo = mid;
    else hi = mid - 1;
  }
  const p = s[lo];
  if (p.t === t || step) return p.v;
  const n = s[lo + 1];
  return p.v + ((n.v - p.v) * (t - p.t)) / (n.t - p.t);
}

/** ∫ v over [a, b) ∩ [first, last] in value × seconds, and the length of that part in seconds. */
export function integrate(s: Pt[], a: number, b: number, step: boolean) {
  let integral = 0;
  let length = 0;
  for (let i = 0; i + 1 < s.length; i++) {
    const x = Math.max(a, s[i].t);
    const y = Math.min(b, s[i + 1].t);
    if (y <= x) continue;
    const vx = valueAt(s, x, step)!;
    const vy = step ? s[i].v : valueAt(s, y, step)!;
    integral += ((step ? s[i].v + s[i].v : vx + vy) / 2) * ((y - x) / 1000);
    length += (y - x) / 1000;
  }
  return { integral, length };
}

/** The time-weighted mean over [a, b), or null where |C| = 0. */
export function timeWeighted(s: Pt[], a: number, b: number, step: boolean): number | null {
  const { integral, length } = integrate(s, a, b, step);
  return length > 0 ? integral / length : null;
}

/** Plot values of [start, end) in n parts (contract 13). */
export function plotValues(s: Pt[], start: number, end: number, n: number): Pt[] {
  const width = Math.floor((end - start) / n);
  const out: Pt[] = [];
  for (let k = 0; k < n; k++) {
    const a = start + k * width;
    const b = k === n - 1 ? end : a + width;
    const part = s.filter((p) => p.t >= a && p.t < b);
    if (!part.length) continue;
    let lo = part[0];
    let hi = part[0];
    for (const p of part) {
      if (p.v < lo.v) lo = p;
      if (p.v > hi.v) hi = p;
    }
    const picked = new Set([part[0], part[part.length - 1], lo, hi]);
    out.push(...[...picked].sort((x, y) => x.t - y.t));
  }
  return out;
}

/** Relative closeness for sums in a different order. */
export const close = (a: number | null, b: number | null, eps = 1e-9) =>
  a === null || b === null
    ? a === b
    : Math.abs(a - b) <= eps * Math.max(1, Math.abs(a), Math.abs(b));
