import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  evaluateClock,
  evaluateSample,
  evaluateSamples,
  INITIAL_STATE,
  type RuleLimits,
  type RuleState,
} from '../../src/alarms/rules/evaluate.js';

// The rule of contract 16 as a pure function, against a reference model written another way: the
// condition as maximal runs of samples, each run raising at its first sample that completes the
// delay and clearing at the sample that ends it.

type Sample = { ts: number; v: number };
type Event = { type: 'raise' | 'clear'; at: number; value?: number };

function model(r: RuleLimits, arrivals: Sample[]): Event[] {
  // Late samples (older than the newest kept) are never evaluated.
  const kept: Sample[] = [];
  for (const s of arrivals) if (!kept.length || s.ts >= kept[kept.length - 1].ts) kept.push(s);
  const above = r.condition === 'above';
  const on = (v: number) => (above ? v > r.limit : v < r.limit);
  const off = (v: number) => (above ? v <= r.limit - r.deadband : v >= r.limit + r.deadband);
  const cond: boolean[] = [];
  kept.forEach((s, i) => cond.push(i > 0 && cond[i - 1] ? !off(s.v) : on(s.v)));
  const events: Event[] = [];
  let i = 0;
  while (i < kept.length) {
    if (!cond[i]) {
      i++;
      continue;
    }
    let end = i;
    while (end + 1 < kept.length && cond[end + 1]) end++;
    const start = kept[i].ts;
    const raiseAt = kept.slice(i, end + 1).find((s) => s.ts - start >= r.delaySeconds * 1000);
    if (raiseAt) {
      events.push({ type: 'raise', at: raiseAt.ts, value: raiseAt.v });
      if (end + 1 < kept.length) events.push({ type: 'clear', at: kept[end + 1].ts });
    }
    i = end + 1;
  }
  return events;
}

function run(r: RuleLimits, arrivals: Sample[], now = Number.MAX_SAFE_INTEGER): Event[] {
  let s: RuleState = INITIAL_STATE;
  const events: Event[] = [];
  for (const a of arrivals) {
    const out = evaluateSample(r, s, a.ts, a.v, now);
    if (!out) continue;
    s = out.state;
    if (out.transition) events.push(out.transition);
  }
  return events;
}

const limits = fc.record({
  condition: fc.constantFrom('above' as const, 'below' as const),
  limit: fc.integer({ min: -5, max: 5 }),
  deadband: fc.integer({ min: 0, max: 4 }),
  delaySeconds: fc.integer({ min: 0, max: 5 }),
});
// Small integers, so values land exactly on Limit and Limit ∓ Deadband often; times in seconds,
// often repeated and sometimes going back (late samples).
const samples = fc.array(
  fc.record({
    ts: fc.integer({ min: 0, max: 40 }).map((s) => s * 1000),
    v: fc.integer({ min: -10, max: 10 }),
  }),
  { maxLength: 40 },
);

describe('limit rule evaluation', () => {
  it('raises and clears exactly as the reference model, for any samples', () => {
    fc.assert(
      fc.property(limits, samples, (r, arrivals) => {
        expect(run(r, arrivals)).toEqual(model(r, arrivals));
      }),
      { numRuns: 3000 },
    );
  });

  it('evaluates a run of samples as evaluateSample does one at a time, from any state', () => {
    const states = fc.record({
      lastTs: fc.option(fc.integer({ min: 0, max: 40 }).map((x) => x * 1000)),
      lastValue: fc.option(fc.integer({ min: -10, max: 10 })),
      active: fc.boolean(),
      since: fc.option(fc.integer({ min: 0, max: 40 }).map((x) => x * 1000)),
      raised: fc.boolean(),
    });
    fc.assert(
      fc.property(
        limits,
        states,
        samples,
        fc.integer({ min: 0, max: 45 }).map((x) => x * 1000),
        fc.boolean(),
        (r, from, arrivals, now, open) => {
          const start: RuleState = { ...from, since: from.active ? (from.since ?? 0) : null };
          // One at a time, as the evaluator did: the alarm opens with a raise, closes with a clear.
          let s = start;
          let alarmOpen = open;
          const one: unknown[] = [];
          for (const a of arrivals) {
            const out = evaluateSample(r, s, a.ts, a.v, now, alarmOpen);
            if (!out) continue;
            s = out.state;
            if (out.transition) {
              one.push(out.transition);
              alarmOpen = out.transition.type === 'raise';
            }
          }
          const many: unknown[] = [];
          const copy = { ...start };
          const after = evaluateSamples(
            r,
            start,
            arrivals.map((a) => ({ ts: a.ts, value: a.v })),
            now,
            open,
            (t) => many.push(t),
          );
          expect(many).toEqual(one);
          expect(after).toEqual(s);
          expect(start).toEqual(copy);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('alternates raise and clear, and a value inside the deadband never changes anything', () => {
    fc.assert(
      fc.property(limits, samples, fc.integer({ min: 1, max: 3 }), (r, arrivals, k) => {
        const events = run(r, arrivals);
        events.forEach((e, i) => expect(e.type).toBe(i % 2 === 0 ? 'raise' : 'clear'));
        // Inserting, right after each sample, a copy whose value lies strictly inside the band
        // (between Limit ∓ Deadband and Limit, so it neither trips nor returns) changes no transition.
        if (r.deadband <= 1) return;
        const inside =
          r.condition === 'above'
            ? r.limit - Math.min(k, r.deadband - 1)
            : r.limit + Math.min(k, r.deadband - 1);
        const padded = arrivals.flatMap((a) => [a, { ts: a.ts, v: inside }]);
        const withPads = run({ ...r, delaySeconds: 0 }, padded).map((e) => e.type);
        const without = run({ ...r, delaySeconds: 0 }, arrivals).map((e) => e.type);
        expect(withPads).toEqual(without);
      }),
      { numRuns: 2000 },
    );
  });

  it('ignores samples ahead of the clock and older than the newest evaluated', () => {
    const r: RuleLimits = { condition: 'above', limit: 10, deadband: 0, delaySeconds: 0 };
    const raised = evaluateSample(r, INITIAL_STATE, 5000, 11, 10_000)!;
    expect(raised.transition).toEqual({ type: 'raise', value: 11, at: 5000 });
    expect(evaluateSample(r, raised.state, 4000, 0, 10_000)).toBeNull(); // late: no clear
    expect(evaluateSample(r, raised.state, 20_000, 0, 10_000)).toBeNull(); // ahead of the clock
    expect(evaluateSample(r, raised.state, 6000, 0, 10_000)!.transition).toEqual({
      type: 'clear',
      at: 6000,
    });
  });

  it('raises by the clock at the end of the delay with the latest value, once', () => {
    const r: RuleLimits = { condition: 'below', limit: 0, deadband: 1, delaySeconds: 60 };
    const tripped = evaluateSample(r, INITIAL_STATE, 1000, -3, 2000)!;
    expect(tripped.transition).toBeNull();
    const later = evaluateSample(r, tripped.state, 30_000, -2, 40_000)!;
    expect(later.transition).toBeNull();
    expect(evaluateClock(r, later.state, 60_999)).toBeNull();
    const byClock = evaluateClock(r, later.state, 61_000)!;
    expect(byClock.transition).toEqual({ type: 'raise', value: -2, at: 61_000 });
    expect(evaluateClock(r, byClock.state, 120_000)).toBeNull();
    // A sample after that is no second raise; one at Limit + Deadband clears.
    const still = evaluateSample(r, byClock.state, 70_000, -0.5, 80_000)!;
    expect(still.transition).toBeNull();
    expect(evaluateSample(r, still.state, 71_000, 1, 80_000)!.transition).toEqual({
      type: 'clear',
      at: 71_000,
    });
  });

  it('raises again at the next true sample when its alarm was resolved by hand', () => {
    const r: RuleLimits = { condition: 'above', limit: 10, deadband: 0, delaySeconds: 0 };
    const raised = evaluateSample(r, INITIAL_STATE, 1000, 12, 5000)!;
    expect(evaluateSample(r, raised.state, 2000, 13, 5000, true)!.transition).toBeNull();
    expect(evaluateSample(r, raised.state, 2000, 13, 5000, false)!.transition).toEqual({
      type: 'raise',
      value: 13,
      at: 2000,
    });
  });
});
