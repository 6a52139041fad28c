// Doubles kept as a whole number and a scale (docs/storage.md, "Why it is exact"): a column of doubles
// is kept as whole numbers m and a scale k (the value is m / 10^k) when, for every value v of the
// column in the row, |round(v × 10^k)| ≤ 2^50 and round(v × 10^k)::bigint::float8 / 10^k, the very
// division a read computes, has the same 8 bytes as v (float8send). The logs' archive (days.ts) and
// the rollups' (rollup-days.ts) both use it.

/** Scales tried for a column of doubles, 10^0 to 10^9. */
const MAX_SCALE = 9;
/** Whole numbers kept for decimals stay within ±2^50, where every one is a double. */
const MAX_WHOLE = 2 ** 50;
/** The scales' powers of ten, an array indexed by k + 1. */
export const P10 = `'{${Array.from({ length: MAX_SCALE + 1 }, (_, k) => 10 ** k).join(',')}}'::float8[]`;
const pow10 = (k: number) => `${10 ** k}::float8`;

/** Whether the double `v` (SQL) is given back exactly by scale k. */
const fits = (v: string, k: number) =>
  `CASE WHEN abs(${v} * ${pow10(k)}) <= ${MAX_WHOLE} THEN float8send(round(${v} * ${pow10(k)})::int8::float8 / ${pow10(k)}) = float8send(${v}) ELSE false END`;

/** Aggregate: the least scale that gives back every value `v` of the group (nulls aside), or null. */
export const scaleOf = (v: string) =>
  `CASE ${Array.from({ length: MAX_SCALE + 1 }, (_, k) => `WHEN bool_and(${fits(v, k)}) IS NOT FALSE THEN ${k}`).join(' ')} END`;

/** The whole number kept for `v` at scale `k` (SQL, not null). */
export const wholeOf = (v: string, k: string) => `round(${v} * (${P10})[${k} + 1])::int8`;

/** The double read back from the whole number `m` at scale `k`. */
export const fromWhole = (m: string, k: string) => `${m}::float8 / (${P10})[${k} + 1]`;
