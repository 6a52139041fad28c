import { requireSites, type Access } from '../auth/access.js';
import type { Database } from '../db/index.js';
import { withAlarmEvents } from '../stream/publish.js';
import { journalEntries, type JournalEvent } from './journal.js';
import {
  RECORD_COLUMNS,
  toRecord,
  type AlarmRecord,
  type RecordRow,
  type SiteBatch,
} from './record.js';
import { alarmIdsOf, firstNotes, requireKnown, type ResolveInput } from './resolve.js';
import { withDeadlockRetry } from './store.js';

// The operator's actions on alarms (contract 16): acknowledge, shelve, unshelve. Each is one
// statement that changes only the alarms the action still changes, and writes with them their
// stream events and journal entries; of two concurrent requests on one alarm, the second waits for
// the first's row lock, then finds nothing left to change (so one event and one entry per change).

export type OperatorInput = ResolveInput;

export interface ActionResult<S extends string> {
  SiteAlarmLogID: string;
  status: S;
  /** The alarm as it stands after this request changed it; absent when the request left it alone. */
  alarm?: AlarmRecord;
}

interface Action {
  event: Extract<JournalEvent, 'acknowledged' | 'shelved' | 'unshelved'>;
  set: string;
  /** Which alarms the action changes (the others answer the second status). */
  when: string;
}

const ACKNOWLEDGE: Action = {
  event: 'acknowledged',
  set: 'acknowledged_at = now(), acknowledged_by = $2',
  when: 'a.acknowledged_at IS NULL', // resolved or not (ISA-18.2: returned to normal, unacknowledged)
};
const SHELVE: Action = {
  event: 'shelved',
  set: 'shelved_until = now() + make_interval(mins => $5::int)',
  when: 'a.resolved_at IS NULL',
};
const UNSHELVE: Action = {
  event: 'unshelved',
  set: 'shelved_until = NULL',
  when: 'a.shelved_until > now()',
};

const statement = (a: Action) =>
  withAlarmEvents(
    `UPDATE site_alarms AS a SET ${a.set}
       FROM unnest($3::int8[], $4::text[]) AS r(id, note) -- names that site_alarms lacks, so RETURNING needs no prefix
      WHERE a.alarm_id = r.id AND a.site_id = $1 AND ${a.when}
      RETURNING ${RECORD_COLUMNS}`,
    `'${a.event}'`,
    [
      journalEntries({
        event: a.event,
        by: '$2::text',
        note: 'r.note',
        from: `JOIN unnest($3::int8[], $4::text[]) AS r(id, note) ON r.id = changed."SiteAlarmLogID"::int8`,
      }),
    ],
  );
const STATEMENTS = new Map([ACKNOWLEDGE, SHELVE, UNSHELVE].map((a) => [a, statement(a)]));

/**
 * Runs an action on the alarms of one site, all or nothing: the site must be reachable (403), every
 * id an alarm of that site (404, nothing changed). An alarm listed twice is changed by its first
 * entry (with that entry's note); `repeat` says what its later entries answer.
 */
async function act<S extends string>(
  db: Database,
  access: Access,
  { siteId, items, pathOf }: SiteBatch<OperatorInput>,
  action: Action,
  status: { changed: S; unchanged: S; repeat: 'changed' | 'unchanged' },
  more: unknown[] = [],
): Promise<ActionResult<S>[]> {
  const ids = alarmIdsOf(items, pathOf);
  await requireSites(db, access, [siteId]);
  const notes = [...firstNotes(items, ids)];
  const changed = await withDeadlockRetry(() =>
    db.transaction(async (tx) => {
      await requireKnown(tx, siteId, ids, pathOf);
      return tx.query<RecordRow>(STATEMENTS.get(action)!, [
        siteId,
        access.client.clientId,
        notes.map(([id]) => id),
        notes.map(([, note]) => note),
        ...more,
      ]);
    }),
  );
  const byId = new Map(changed.map((r) => [r.SiteAlarmLogID, toRecord(r)]));
  const seen = new Set<string>();
  return ids.map((id) => {
    const alarm = byId.get(id);
    const first = !seen.has(id);
    seen.add(id);
    if (!alarm) return { SiteAlarmLogID: id, status: status.unchanged };
    if (first) return { SiteAlarmLogID: id, status: status.changed, alarm };
    return status.repeat === 'changed'
      ? { SiteAlarmLogID: id, status: status.changed, alarm }
      : { SiteAlarmLogID: id, status: status.unchanged };
  });
}

/** Acknowledges alarms (resolved ones too): `acknowledged` by this request, else `already_acknowledged`. */
export const acknowledgeAlarms = (db: Database, access: Access, batch: SiteBatch<OperatorInput>) =>
  act(db, access, batch, ACKNOWLEDGE, {
    changed: 'acknowledged',
    unchanged: 'already_acknowledged',
    repeat: 'unchanged',
  });

/**
 * Shelves unresolved alarms for `minutes` from now (a shelved one again, from now): `shelved`, or
 * `already_resolved` for a resolved alarm, which is left as it is. Every entry of a shelved alarm
 * answers `shelved` with its ShelvedUntil.
 */
export const shelveAlarms = (
  db: Database,
  access: Access,
  batch: SiteBatch<OperatorInput>,
  minutes: number,
) =>
  act(
    db,
    access,
    batch,
    SHELVE,
    { changed: 'shelved', unchanged: 'already_resolved', repeat: 'changed' },
    [minutes],
  );

/** Ends the shelving of alarms: `unshelved` by this request, else `not_shelved`. */
export const unshelveAlarms = (db: Database, access: Access, batch: SiteBatch<OperatorInput>) =>
  act(db, access, batch, UNSHELVE, {
    changed: 'unshelved',
    unchanged: 'not_shelved',
    repeat: 'unchanged',
  });
