// A site's worst state, as the overview ranks sites (worst first): an unresolved critical alarm,
// then communication loss, then an unresolved major alarm, then any other unresolved alarm, then
// normal.

export type WorstState = 'critical' | 'comm-loss' | 'major' | 'alarm' | 'normal';

export const WORST_STATES: readonly WorstState[] = [
  'critical',
  'comm-loss',
  'major',
  'alarm',
  'normal',
];

/** 0 for the worst state, 4 for normal: sort ascending for "worst first". */
export const rankOf = (state: WorstState): number => WORST_STATES.indexOf(state);

export const STATE_LABEL: Record<WorstState, string> = {
  critical: 'Critical alarm',
  'comm-loss': 'Communication loss',
  major: 'Major alarm',
  alarm: 'Other alarm',
  normal: 'Normal',
};
