import type { Queryable } from '../../db/index.js';
import { nextMonth } from '../retention/horizon.js';
import { archiveBound, archiveName, partitionMonths, partitionName } from '../retention/tables.js';

// The partitions of sensor_logs by the time they hold, so that a read of the logs around an instant
// names the partition that holds it (interpolated values): through the partitioned table, each read
// paid for pruning again, about a tenth of its cost.

/** A partition of sensor_logs: its table and range [from, to) in epoch ms (open ends infinite). */
export interface LogPartition {
  table: string;
  from: number;
  to: number;
}

/**
 * sensor_logs' partitions: its archive, if there still is one, and its months, as retention knows
 * them (retention/tables.ts).
 */
export async function logPartitions(db: Queryable): Promise<LogPartition[]> {
  const [archive, months] = await Promise.all([archiveBound(db), partitionMonths(db)]);
  const table = 'sensor_logs';
  return [
    ...(archive?.tables.includes(archiveName(table))
      ? [{ table: archiveName(table), from: -Infinity, to: archive.end }]
      : []),
    ...months.map((m) => ({ table: partitionName(table, m), from: m, to: nextMonth(m) })),
  ];
}

/** The partitions, and the partitioned table itself for every range of time none of them holds. */
export function coverAll(parts: LogPartition[]): LogPartition[] {
  const out: LogPartition[] = [];
  let from = -Infinity;
  for (const p of parts) {
    if (p.from > from) out.push({ table: 'sensor_logs', from, to: p.from });
    out.push(p);
    from = Math.max(from, p.to);
  }
  if (from < Infinity) out.push({ table: 'sensor_logs', from, to: Infinity });
  return out;
}
