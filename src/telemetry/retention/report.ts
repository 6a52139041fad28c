import type { RetentionReport } from './pass.js';

// A pass's report as lines of text: what the CLI prints and what the service logs.

export const RETENTION_OFF = 'RETENTION_DAYS is 0: every log is kept, nothing was removed';

const day = (t: number | undefined) => (t === undefined ? 'none' : new Date(t).toISOString());

export function describeRetention(r: RetentionReport): string[] {
  if (r.days <= 0) return [RETENTION_OFF];
  if (!r.ran) return ['another retention pass is under way (another instance?): nothing was done'];
  const lines = [
    `retention of ${r.days} days: logs before ${day(r.target)} go; horizon ${r.before === r.after ? `stays at ${day(r.after)}` : `moved from ${day(r.before)} to ${day(r.after)}`}`,
  ];
  if (r.refreshed) lines.push(`rollups: ${r.refreshed} stale quarters refreshed first`);
  for (const [table, months] of Object.entries(r.dropped))
    lines.push(`${table}: months dropped: ${months.join(', ')}`);
  for (const [table, a] of Object.entries(r.archive))
    lines.push(`${table}: ${a.rows} rows removed${a.dropped ? ' (dropped whole)' : ''}`);
  if (!Object.keys(r.dropped).length && !Object.values(r.archive).some((a) => a.rows || a.dropped))
    lines.push('nothing was dropped');
  if (r.skipped)
    lines.push(
      `left for a later pass: ${r.skipped.what} and every later month: ${r.skipped.reason}`,
    );
  return lines;
}
