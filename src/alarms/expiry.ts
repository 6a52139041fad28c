import type { Queryable } from '../db/index.js';
import { PeriodicTask } from '../periodic-task.js';
import { withAlarmEvents } from '../stream/publish.js';
import { journalEntries } from './journal.js';
import { RECORD_COLUMNS, toRecord, type AlarmRecord, type RecordRow } from './record.js';

// The end of a shelf (contract 16): once ShelvedUntil passes, the service unshelves the alarm
// itself, with an `unshelved` event and journal entry whose By is null. Every instance runs the
// check; the rows due are taken with FOR UPDATE SKIP LOCKED and checked again under their lock, so
// each shelf is ended once, by one instance, whatever the others do at the same moment.

/** How often each instance looks for shelves that have ended. */
export const SHELF_CHECK_MS = 1000;
/** Shelves ended per statement (a run takes as many statements as it needs). */
const BATCH = 500;

const EXPIRE = withAlarmEvents(
  `UPDATE site_alarms SET shelved_until = NULL
    WHERE alarm_id IN (SELECT alarm_id FROM site_alarms WHERE shelved_until <= now()
                        ORDER BY shelved_until LIMIT $1 FOR UPDATE SKIP LOCKED)
      AND shelved_until <= now()
    RETURNING ${RECORD_COLUMNS}`,
  `'unshelved'`,
  [journalEntries({ event: 'unshelved', by: 'NULL' })],
);

/** Unshelves at most `limit` alarms whose shelf has ended; returns them as they now stand. */
export async function expireShelves(db: Queryable, limit = BATCH): Promise<AlarmRecord[]> {
  const rows = await db.query<RecordRow>(EXPIRE, [limit]);
  return rows.map(toRecord);
}

/** The check, every SHELF_CHECK_MS on every instance (the statement keeps them from doing one shelf twice). */
export class ShelfExpiry extends PeriodicTask {
  constructor(db: Queryable, onError: (err: unknown) => void, intervalMs = SHELF_CHECK_MS) {
    super(
      async (signal) => {
        while (!signal.aborted && (await expireShelves(db)).length === BATCH);
      },
      { intervalMs, onError },
    );
  }
}
