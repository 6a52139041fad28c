import type { Values } from '../../export/records.js';
import { isoTime } from '../../time.js';

// The plot values of each part (plot.ts): its first, last, lowest and highest sample, gathered from
// the rows of the rollups and logs that cover it, then written as records, each sample once.

/**
 * Each part's extremes: per part eight numbers, the time and value of its first, last, lowest and
 * highest sample (lowest: the earliest of equal values, highest: the earliest too), NaN times where
 * the part has no sample.
 */
export class Extremes {
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

/** The records of the parts that hold samples, each part's samples once and in time order. */
export function plotRecords(parts: Extremes, sensorId: number): Values[] {
  const records: Values[] = [];
  const x = parts.x;
  for (let k = 0; k < parts.parts; k++) {
    const o = 8 * k;
    if (Number.isNaN(x[o])) continue;
    // The part's first, last, lowest and highest sample, each once, in time order: first, then the
    // lowest and highest (either order), then last; each may be another's sample.
    const [lo, hi] = x[o + 4] <= x[o + 6] ? [o + 4, o + 6] : [o + 6, o + 4];
    let previous = NaN;
    for (const j of [o, lo, hi, o + 2]) {
      if (x[j] === previous) continue;
      previous = x[j];
      records.push([sensorId, isoTime(x[j]), x[j + 1]]);
    }
  }
  return records;
}
