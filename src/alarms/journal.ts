import type { Queryable } from '../db/index.js';
import { toIso } from '../time.js';

// The alarm journal (contract 16): one entry per change of an alarm, with who and why, written by
// the very statement that makes the change (journalEntries, a CTE for withAlarmEvents), so an entry
// exists exactly when its change is committed, whoever made it (a route, a rule, the service).

export const JOURNAL_EVENTS = [
  'raised',
  'acknowledged',
  'shelved',
  'unshelved',
  'resolved',
  'notified',
  'notification_failed',
] as const;
export type JournalEvent = (typeof JOURNAL_EVENTS)[number];

export interface JournalEntry {
  EventID: string;
  SiteAlarmLogID: string;
  SiteID: number;
  Time: string;
  Event: JournalEvent;
  /** A client id, "rule:<AlarmRuleID>", "communication", or null (the service itself). */
  By: string | null;
  Note: string | null;
  Channel: string | null;
  Step: number | null;
}

/**
 * A CTE (withAlarmEvents' `also`) writing one `event` entry per row of `changed` that `where`
 * keeps, in id order. `by` and `note` are SQL expressions (parameters, or columns of `from`, a
 * join onto changed); the time is the transaction's, the same as the change's own columns.
 */
export const journalEntries = (e: {
  event: JournalEvent;
  by: string;
  note?: string;
  from?: string;
  where?: string;
}) => `journal AS (INSERT INTO alarm_journal (alarm_id, site_id, event, by, note)
  SELECT changed."SiteAlarmLogID"::int8, changed."SiteID", '${e.event}', ${e.by}, ${e.note ?? 'NULL'}
    FROM changed ${e.from ?? ''} WHERE ${e.where ?? 'true'} ORDER BY changed."SiteAlarmLogID")`;

export interface JournalFilter {
  siteIds: number[];
  start: number;
  end: number;
  /** Only this alarm's entries. */
  alarmId: string | null;
  limit: number;
  offset: number;
}

/** The entries of the sites (and alarm) with Time in [start, end), oldest first (Time, then EventID), one page, and how many in all. */
export async function readJournal(
  db: Queryable,
  f: JournalFilter,
): Promise<{ data: JournalEntry[]; total: number }> {
  const where = `site_id = ANY($1::int[]) AND time >= $2 AND time < $3 AND ($4::int8 IS NULL OR alarm_id = $4::int8)`;
  const params = [f.siteIds, new Date(f.start), new Date(f.end), f.alarmId];
  const [rows, [count]] = await Promise.all([
    db.query<Omit<JournalEntry, 'Time'> & { Time: Date }>(
      `SELECT event_id::text AS "EventID", alarm_id::text AS "SiteAlarmLogID", site_id AS "SiteID", time AS "Time",
              event AS "Event", by AS "By", note AS "Note", channel AS "Channel", step AS "Step"
         FROM alarm_journal WHERE ${where}
        ORDER BY time, event_id LIMIT $5 OFFSET $6`,
      [...params, f.limit, f.offset],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM alarm_journal WHERE ${where}`, params),
  ]);
  return { data: rows.map((r) => ({ ...r, Time: toIso(r.Time)! })), total: count.n };
}
