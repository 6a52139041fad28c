// The rule itself, as a pure function of its state and one sample (or the clock): deadband
// hysteresis, the delay, late and future samples. The evaluator (evaluator.ts) feeds it what was
// stored and applies the transitions it returns; test/alarms/rules-evaluate.test.ts checks it
// against a reference model for any sequence of samples.

export interface RuleLimits {
  condition: 'above' | 'below';
  limit: number;
  deadband: number;
  delaySeconds: number;
}

export interface RuleState {
  /** Epoch ms of the newest sample evaluated (null: none yet). */
  lastTs: number | null;
  lastValue: number | null;
  /** The condition, with hysteresis: true from a value past Limit until one back past Limit ∓ Deadband. */
  active: boolean;
  /** Epoch ms of the sample that made the condition true (null while false). */
  since: number | null;
  /** The rule has raised its alarm for this spell of the condition. */
  raised: boolean;
}

export type Transition =
  { type: 'raise'; value: number; at: number } | { type: 'clear'; at: number } | null;

export const INITIAL_STATE: RuleState = {
  lastTs: null,
  lastValue: null,
  active: false,
  since: null,
  raised: false,
};

const delayMs = (r: RuleLimits) => r.delaySeconds * 1000;

/** Whether the value starts the condition (strictly past the limit). */
export const trips = (r: RuleLimits, v: number) =>
  r.condition === 'above' ? v > r.limit : v < r.limit;

/** Whether the value ends the condition (back at or past the deadband's far edge). */
export const returns = (r: RuleLimits, v: number) =>
  r.condition === 'above' ? v <= r.limit - r.deadband : v >= r.limit + r.deadband;

/**
 * One sample: ignored (state unchanged, null) when older than the newest evaluated or ahead of
 * `now`; else the new state and the transition it causes. `alarmOpen` says whether the alarm the
 * rule raised is still unresolved: one resolved by hand is raised again by the next true sample.
 */
export function evaluateSample(
  r: RuleLimits,
  s: RuleState,
  ts: number,
  value: number,
  now: number,
  alarmOpen = true,
): { state: RuleState; transition: Transition } | null {
  if (!Number.isFinite(value) || ts > now || (s.lastTs !== null && ts < s.lastTs)) return null;
  let transition: Transition = null;
  const state = evaluateSamples(r, s, [{ ts, value }], now, alarmOpen, (t) => (transition = t));
  return { state, transition };
}

/**
 * The rule over samples in the order stored, from state `s` (left as it is): the state after the
 * last, with each transition passed to `note` as it happens. `alarmOpen` is the alarm's state before
 * the first; a raise opens it and a clear closes it for the samples after. The evaluator's loop over
 * every stored sample of every rule, without objects for each sample; evaluateSample is its one
 * sample (the test checks that folding that gives the same, for any sequence and starting state).
 */
export function evaluateSamples(
  r: RuleLimits,
  s: RuleState,
  samples: readonly { ts: number; value: number }[],
  now: number,
  alarmOpen: boolean,
  note: (t: NonNullable<Transition>) => void,
): RuleState {
  let { lastTs, lastValue, active, since, raised } = s;
  const delay = delayMs(r);
  const raise = (value: number, at: number) => {
    alarmOpen = true;
    note({ type: 'raise', value, at });
  };
  for (const { ts, value } of samples) {
    if (!Number.isFinite(value) || ts > now || (lastTs !== null && ts < lastTs)) continue;
    lastTs = ts;
    lastValue = value;
    if (!active) {
      if (!trips(r, value)) continue;
      active = true;
      since = ts;
      raised = delay === 0;
      if (raised) raise(value, ts);
    } else if (returns(r, value)) {
      const cleared = raised;
      active = false;
      since = null;
      raised = false;
      if (cleared) {
        alarmOpen = false;
        note({ type: 'clear', at: ts });
      }
    } else if (!raised && ts - since! >= delay) {
      raised = true;
      raise(value, ts);
    } else if (raised && !alarmOpen) raise(value, ts);
  }
  return { lastTs, lastValue, active, since, raised };
}

/**
 * The clock: a condition true for the whole delay with no later sample raises at the delay's end,
 * with the latest sample's value.
 */
export function evaluateClock(
  r: RuleLimits,
  s: RuleState,
  now: number,
): { state: RuleState; transition: Transition } | null {
  if (!s.active || s.raised || s.since === null || s.lastValue === null) return null;
  const end = s.since + delayMs(r);
  if (now < end) return null;
  return {
    state: { ...s, raised: true },
    transition: { type: 'raise', value: s.lastValue, at: end },
  };
}
