import type { RuleState } from './evaluate.js';
import type { RuleWithState } from './repository.js';

// The newest samples the evaluator has evaluated that are not in their rules' rows
// (alarm_rule_cursor.unsaved, migration 023). Most passes evaluate a rule without changing its
// condition, its delay or its alarm: all that changes is the newest sample (its time makes older
// samples late; its value is that of a raise by the clock). Rewriting every such rule's row on
// every pass cost more than the rest of the pass; these go into the position's row instead, which
// the pass writes anyway, in the same commit. A rule's row is written when anything else of its
// state changes (a transition, a delay that starts or ends, its alarm), when its row has no sample
// yet, and when there are too many entries here.

/** Entries kept at most: past that, the pass writes its rules' rows (as when there were none). */
export const MAX_UNSAVED = 2000;
/** Entries from which a pass writes the rows of all of them and empties the list. */
export const FLUSH_UNSAVED = 1000;

export interface Unsaved {
  /** The row's last_ts (epoch ms) the entry was written on: it holds only while the row has it. */
  base: number;
  ts: number;
  value: number | null;
}

export type UnsavedMap = Map<number, Unsaved>;

export function parseUnsaved(text: string): UnsavedMap {
  const rows = JSON.parse(text) as [number, number, number, number | null][];
  return new Map(rows.map(([id, base, ts, value]) => [id, { base, ts, value }]));
}

export function formatUnsaved(map: UnsavedMap): string {
  return JSON.stringify([...map].map(([id, u]) => [id, u.base, u.ts, u.value]));
}

/**
 * A loaded rule's state with its entry (removed from `map`: the pass puts back what holds after
 * it). An entry written on another last_ts than the row's is stale (the row was written since, or
 * the import started the rule afresh).
 */
export function applyUnsaved(r: RuleWithState, map: UnsavedMap): void {
  const u = map.get(r.rule.id);
  if (!u) return;
  map.delete(r.rule.id);
  if (r.saved.state.lastTs === u.base) r.state = { ...r.state, lastTs: u.ts, lastValue: u.value };
}

const sameDurable = (a: RuleState, b: RuleState) =>
  a.active === b.active && a.since === b.since && a.raised === b.raised;

/**
 * What becomes of a rule after the pass evaluated it: its row is written ('row'), only its newest
 * sample is noted ('unsaved'), or nothing changed ('none').
 */
export function outcomeOf(r: RuleWithState, transitions: number): 'row' | 'unsaved' | 'none' {
  const { state, alarmId } = r.saved;
  if (
    transitions > 0 ||
    r.alarmId !== alarmId ||
    !sameDurable(r.state, state) ||
    (state.lastTs === null && r.state.lastTs !== null)
  )
    return 'row';
  return r.state.lastTs !== state.lastTs || r.state.lastValue !== state.lastValue
    ? 'unsaved'
    : 'none';
}
