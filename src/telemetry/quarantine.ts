import { rowPages } from '../db/pager.js';
import type { Queryable } from '../db/index.js';

// Log rows moved out of the logs because a measured value in them was beyond 1e15 in absolute value
// (migrations/011_quarantine.sql): kept whole so that nobody loses sight of what a gateway once sent.

export interface QuarantinedLog {
  kind: string;
  equipmentId: number;
  timestamp: string;
  record: Record<string, unknown>;
}

const PAGE = 1000;

/** Every quarantined log, by kind, equipment and time, a page at a time (the keyset pager), to `each`. */
export async function listQuarantined(
  db: Queryable,
  each: (rows: QuarantinedLog[]) => void,
): Promise<number> {
  let total = 0;
  const pages = rowPages(db, PAGE, {
    sql: (after) =>
      `SELECT kind, equipment_id AS "equipmentId", ts::text AS ts,
              to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS timestamp, record
         FROM quarantined_logs ${after ? 'WHERE (kind, equipment_id, ts) > ($1, $2, $3::timestamptz)' : ''}
        ORDER BY kind, equipment_id, ts LIMIT ${PAGE}`,
    params: [],
    keyOf: (row: QuarantinedLog & { ts: string }) => [row.kind, row.equipmentId, row.ts],
    page: (rows) =>
      rows.map(({ kind, equipmentId, timestamp, record }) => ({
        kind,
        equipmentId,
        timestamp,
        record,
      })),
  });
  for await (const rows of pages) {
    total += rows.length;
    each(rows);
  }
  return total;
}

/** One quarantined log as the CLI prints it: kind, id, time and the row as stored, tab-separated. */
export const quarantineLine = (row: QuarantinedLog): string =>
  `${row.kind}\t${row.equipmentId}\t${row.timestamp}\t${JSON.stringify(row.record)}`;

export const describeQuarantine = (total: number): string =>
  total
    ? `${total} quarantined log${total === 1 ? '' : 's'} (values beyond 1e15 in absolute value)`
    : 'no quarantined logs';
