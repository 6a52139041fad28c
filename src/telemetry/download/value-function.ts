// The value function of contract 13 between two samples: stepped (the earlier value holds until the
// next sample) or continuous (the straight line between them). Times in ms, integrals in value ×
// seconds (as the rollup units store them).

export interface Sample {
  t: number;
  v: number;
}

/** v(t) between samples p and n (p.t ≤ t ≤ n.t). */
export function valueBetween(p: Sample, n: Sample, t: number, stepped: boolean): number {
  if (t === n.t) return n.v;
  if (stepped || t === p.t) return p.v;
  return p.v + ((n.v - p.v) * (t - p.t)) / (n.t - p.t);
}

/** ∫ v over [x, y] ⊂ [p.t, n.t], value × seconds. */
export function integralBetween(
  p: Sample,
  n: Sample,
  x: number,
  y: number,
  stepped: boolean,
): number {
  if (y <= x) return 0;
  const dt = (y - x) / 1000;
  if (stepped) return p.v * dt;
  return ((valueBetween(p, n, x, false) + valueBetween(p, n, y, false)) / 2) * dt;
}
