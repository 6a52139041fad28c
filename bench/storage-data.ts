// The data set of bench/storage.ts: 100 sensors over 31 days as gateways send them. Sensors 1–40 are
// analog, logged each minute on the minute: a level drifting as a random walk with a daily swing,
// plus measurement noise, at two decimals. Sensors 41–70 report by exception: a level simulated each
// second is sent (at that second, to the millisecond) when it has moved beyond a deadband of 0.45 since
// the last value sent, at two decimals. Sensors 71–100 are discrete, logged each minute: 0 or 1, a
// state that changes about twice a day. Seeded, so every run loads the same samples.

import { random } from '../src/random.js';

export const DAY_MS = 86_400_000;
export const START = Date.UTC(2026, 7, 1); // 31 days of August 2026
/** BENCH_DAYS: fewer days, for a trial of the script (with BENCH_WRITE=0 and BENCH_RESULTS_DIR). */
export const DAYS = Number(process.env.BENCH_DAYS ?? 31);
export const SENSORS = 100;

export type Signal = 'analog' | 'by exception' | 'discrete';
export const signalOf = (id: number): Signal =>
  id <= 40 ? 'analog' : id <= 70 ? 'by exception' : 'discrete';

export interface SensorSeries {
  id: number;
  ts: number[];
  values: number[];
}

/** Noise of the given standard deviation (a sum of uniforms: cheap and near enough to normal). */
const noise = (rand: () => number, sd: number) =>
  (rand() + rand() + rand() + rand() - 2) * sd * Math.sqrt(3);

const twoDecimals = (x: number) => Math.round(x * 100) / 100;

export function generateSensor(id: number): SensorSeries {
  const rand = random(id * 7919);
  const ts: number[] = [];
  const values: number[] = [];
  const end = START + DAYS * DAY_MS;
  const signal = signalOf(id);
  if (signal === 'analog') {
    const base = 20 + rand() * 60;
    const swing = 1 + rand() * 4;
    let drift = 0;
    for (let t = START; t < end; t += 60_000) {
      drift += noise(rand, 0.02);
      const daily = swing * Math.sin((2 * Math.PI * (t % DAY_MS)) / DAY_MS);
      ts.push(t);
      values.push(twoDecimals(base + drift + daily + noise(rand, 0.05)));
    }
  } else if (signal === 'by exception') {
    const mean = 2 + rand() * 8;
    let level = mean;
    let sent = Number.NaN;
    for (let t = START; t < end; t += 1000) {
      level += noise(rand, 0.01) - 0.0001 * (level - mean);
      if (!(Math.abs(level - sent) <= 0.45)) {
        sent = twoDecimals(level);
        ts.push(t + Math.floor(rand() * 1000));
        values.push(sent);
      }
    }
  } else {
    let state = rand() < 0.5 ? 0 : 1;
    for (let t = START; t < end; t += 60_000) {
      if (rand() < 1 / 720) state = 1 - state;
      ts.push(t);
      values.push(state);
    }
  }
  return { id, ts, values };
}
