import type { ArchiveReport } from './pass.js';

// An archive pass's report as lines of text: what the CLI prints and what the service logs.

export const ARCHIVE_OFF = 'ARCHIVE_AFTER_DAYS is 0: the archive is off, nothing was archived';

const MB = (b: number) => `${(b / 1_048_576).toFixed(1)} MB`;
const perLog = (b: number, n: number) => (n ? `${(b / n).toFixed(2)} B a log` : '-');

export function describeArchive(r: ArchiveReport): string[] {
  if (!r.ran) return ['another archive pass is under way (another instance?): nothing was done'];
  const lines = [
    `archive of ${r.days} days: the days before ${new Date(r.until).toISOString().slice(0, 10)} are due`,
  ];
  let days = 0;
  for (const k of r.kinds) {
    if (!k.days) continue;
    days += k.days;
    lines.push(
      `${k.kind}: ${k.days} equipment-days, ${k.logs} logs: ${MB(k.rowBytes)} as rows (${perLog(k.rowBytes, k.logs)}) -> ${MB(k.archiveBytes)} archived (${perLog(k.archiveBytes, k.logs)}); ${k.units} rollup units (quarters and hours) compacted`,
    );
  }
  if (!days) lines.push('nothing was due');
  if (r.truncated.length) lines.push(`emptied partitions given back: ${r.truncated.join(', ')}`);
  lines.push(
    `log and archive tables: ${MB(r.tableBytes.before)} before, ${MB(r.tableBytes.after)} after`,
    // Not partitioned: the rollups' freed space is reused by new rollups once vacuumed, not given back.
    `rollup tables: ${MB(r.rollupBytes.before)} before, ${MB(r.rollupBytes.after)} after (space freed in them is reused once vacuumed)`,
  );
  for (const f of r.failed)
    lines.push(
      `set aside until the next pass: ${f.kind} ${f.id} ${new Date(f.day).toISOString().slice(0, 10)}: ${f.error}`,
    );
  return lines;
}
