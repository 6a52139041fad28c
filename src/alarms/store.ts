import type { Queryable } from '../db/index.js';
import { newOutcomeId, outcomeCte, settle } from '../db/outcome.js';
import { withAlarmEvents } from '../stream/publish.js';
import { journalEntries } from './journal.js';
import { NOTIFY_RESOLVED, scheduleRaised } from './notify/outbox-sql.js';
import {
  keyOf,
  RECORD_COLUMNS,
  toRecord,
  type AlarmRecord,
  type AlarmSource,
  type RecordRow,
  type Severity,
} from './record.js';

// The SQL of alarms. Deduplication and the lifecycle are the database's: the partial unique index
// site_alarms_open_key (migration 004) holds at most one unresolved row per key, sends are one
// INSERT ... ON CONFLICT on it, and a resolve only touches rows still unresolved. Each statement
// also stores the live stream's alarm event of every alarm it changed, and the journal entry of
// every change (same statement, same commit): whoever calls these, routes or rules, gets both.

/** The sends of one key within one request, folded into one row (a statement may touch a row once). */
export interface AlarmGroup {
  typeId: number | null;
  equipmentId: number | null;
  alarmType: string;
  /** Severity, message and value of the send with the latest timestamp (on a tie, the later one in the request). */
  severity: Severity;
  message: string;
  value: number | null;
  firstSeen: number;
  lastSeen: number;
  occurrences: number;
  /** With upsertAlarms' `siteId` null: who raises this group (else `raisedBy.by`), and its site. */
  by?: string;
  siteId?: number;
}

// On a duplicate: count every send; FirstSeen and LastSeen only widen (an out-of-order send never
// moves LastSeen backwards); severity, message and value follow the send that is not older than LastSeen.
// `ofGroups`: each group has its own site ($15) and raiser ($14), for the rule evaluator's raises.
const upsertSql = (ofGroups: boolean) =>
  withAlarmEvents(
    `
INSERT INTO site_alarms AS a (site_id, equipment_type_id, equipment_id, alarm_type, severity, message, value, first_seen, last_seen, occurrences, source)
SELECT ${ofGroups ? 'COALESCE(t.site_id, $1::int)' : '$1::int'}, t.type_id, t.equipment_id, t.alarm_type, t.severity, t.message, t.value, t.first_seen, t.last_seen, t.occurrences, $12::text
  FROM unnest($2::int[], $3::int[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::timestamptz[], $9::timestamptz[], $10::int[]${ofGroups ? ', $15::int[]' : ''})
       WITH ORDINALITY AS t(type_id, equipment_id, alarm_type, severity, message, value, first_seen, last_seen, occurrences${ofGroups ? ', site_id' : ''}, ord)
 ORDER BY t.ord
ON CONFLICT (site_id, (COALESCE(equipment_type_id, 0)), (COALESCE(equipment_id, 0)), alarm_type) WHERE resolved_at IS NULL
DO UPDATE SET
  occurrences = a.occurrences + EXCLUDED.occurrences,
  first_seen = LEAST(a.first_seen, EXCLUDED.first_seen),
  last_seen = GREATEST(a.last_seen, EXCLUDED.last_seen),
  severity = CASE WHEN EXCLUDED.last_seen >= a.last_seen THEN EXCLUDED.severity ELSE a.severity END,
  message = CASE WHEN EXCLUDED.last_seen >= a.last_seen THEN EXCLUDED.message ELSE a.message END,
  value = CASE WHEN EXCLUDED.last_seen >= a.last_seen THEN EXCLUDED.value ELSE a.value END
RETURNING (xmax = 0) AS created, ${RECORD_COLUMNS}`,
    `CASE WHEN created THEN 'created' ELSE 'duplicate' END`,
    [
      // The request's outcome, in the same commit: what it answers, should its connection break at commit.
      outcomeCte('$11', `COALESCE(jsonb_agg(to_jsonb(changed)), '[]'::jsonb)`, 'changed'),
      // Only a new alarm is a change; a duplicate send bumps its counters (contract 16).
      ofGroups
        ? journalEntries({
            event: 'raised',
            by: 'COALESCE(g.who, $13::text)',
            from: `JOIN unnest($2::int[], $3::int[], $4::text[], $14::text[], $15::int[]) AS g(type_id, equipment_id, alarm_type, who, site_id)
               ON g.site_id = changed."SiteID" AND g.alarm_type = changed."AlarmType"
              AND g.type_id IS NOT DISTINCT FROM changed."EquipmentTypeID"
              AND g.equipment_id::text IS NOT DISTINCT FROM changed."EquipmentID"`,
            where: 'changed.created',
          })
        : journalEntries({ event: 'raised', by: '$13::text', where: 'changed.created' }),
      // Its notification steps, recorded with it (src/alarms/notify/).
      scheduleRaised('changed.created'),
    ],
  );
const UPSERT = upsertSql(false);
const UPSERT_OF_GROUPS = upsertSql(true);

/** Who raises: the source a new alarm gets, and the journal's By (a client id, "rule:<id>", "communication"). */
export interface RaisedBy {
  source: AlarmSource;
  by: string | null;
}

/**
 * Stores the groups of one site in one statement. Groups should come sorted by key, so that
 * concurrent requests lock shared keys in the same order. Returns, by key, whether the row was
 * created (else an open alarm was bumped) and the record as it now stands. A send whose connection
 * broke during the statement (a failover) is settled on a new connection (src/db/outcome.ts): the
 * rows its commit recorded, or the same send again (same request id) when it did not commit, so an
 * occurrence is never counted twice; `until` (epoch ms) bounds that. A created alarm gets
 * `raisedBy.source` and a `raised` journal entry by `raisedBy.by` (default: an edge send of nobody named).
 * With `siteId` null, each group names its own site and raiser (`siteId`, `by`: the rule evaluator's
 * raises of many sites, sorted by site, then key), and the result's keys are "<site>|<key>".
 */
export async function upsertAlarms(
  db: Queryable,
  siteId: number | null,
  groups: AlarmGroup[],
  until = Date.now() + 30_000,
  raisedBy: RaisedBy = { source: 'edge', by: null },
): Promise<Map<string, { created: boolean; record: AlarmRecord }>> {
  const col = <T>(f: (g: AlarmGroup) => T) => groups.map(f);
  const id = newOutcomeId();
  const params = [
    siteId,
    col((g) => g.typeId),
    col((g) => g.equipmentId),
    col((g) => g.alarmType),
    col((g) => g.severity),
    col((g) => g.message),
    col((g) => g.value),
    col((g) => new Date(g.firstSeen).toISOString()),
    col((g) => new Date(g.lastSeen).toISOString()),
    col((g) => g.occurrences),
    id,
    raisedBy.source,
    raisedBy.by,
    ...(siteId === null ? [col((g) => g.by ?? raisedBy.by), col((g) => g.siteId)] : []),
  ];
  type Stored = RecordRow & { created: boolean };
  const sql = siteId === null ? UPSERT_OF_GROUPS : UPSERT;
  const rows = await settle(() => db.query<Stored>(sql, params), {
    ids: [id],
    until,
    lookup: () => db,
    // The recorded rows are the statement's own as JSON: times as text, which toRecord reads alike.
    recorded: (found) => found.get(id) as Stored[],
  });
  return new Map(
    rows.map((r) => [
      siteId === null
        ? `${r.SiteID}|${keyOf(r.EquipmentTypeID, r.EquipmentID, r.AlarmType)}`
        : keyOf(r.EquipmentTypeID, r.EquipmentID, r.AlarmType),
      { created: r.created, record: toRecord(r) },
    ]),
  );
}

/** Which of the ids are alarms of this site (resolved or not). */
export async function findSiteAlarmIds(
  db: Queryable,
  siteId: number,
  ids: string[],
): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    `SELECT alarm_id::text AS id FROM site_alarms WHERE site_id = $1 AND alarm_id = ANY($2::int8[])`,
    [siteId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Resolves those of the alarms (distinct ids) that are still unresolved, recording the time, the
 * client (or "rule:<id>", "communication") and the note, with a `resolved` journal entry each;
 * returns their records (an item's own `by` replaces `clientId` for it; `siteId` null: alarms of
 * any site, for the rule evaluator, which found them itself). Of two concurrent resolves of one
 * alarm, the second waits for the first's row lock, then finds it resolved and leaves it alone.
 */
export async function markResolved(
  db: Queryable,
  siteId: number | null,
  items: { id: string; note: string | null; by?: string }[],
  clientId: string,
): Promise<AlarmRecord[]> {
  const rows = await db.query<RecordRow>(
    withAlarmEvents(
      `UPDATE site_alarms AS a SET resolved_at = now(), resolved_by = COALESCE(r.who, $2), resolve_note = r.note
         FROM unnest($3::int8[], $4::text[], $5::text[]) AS r(id, note, who) -- names that site_alarms lacks, so RETURNING needs no prefix
        WHERE a.alarm_id = r.id AND ($1::int IS NULL OR a.site_id = $1) AND a.resolved_at IS NULL
        RETURNING ${RECORD_COLUMNS}`,
      `'resolved'`,
      [
        journalEntries({
          event: 'resolved',
          by: 'COALESCE(r.who, $2::text)',
          note: 'r.note',
          from: `JOIN unnest($3::int8[], $4::text[], $5::text[]) AS r(id, note, who) ON r.id = changed."SiteAlarmLogID"::int8`,
        }),
        NOTIFY_RESOLVED,
      ],
    ),
    [
      siteId,
      clientId,
      items.map((i) => i.id),
      items.map((i) => i.note),
      items.map((i) => i.by ?? null),
    ],
  );
  return rows.map(toRecord);
}

/** Unresolved alarms of the sites, newest first; only the given severities when a list is given. */
export async function listActive(
  db: Queryable,
  siteIds: number[],
  limit: number,
  severities: readonly string[] | null = null,
): Promise<AlarmRecord[]> {
  const rows = await db.query<RecordRow>(
    `SELECT ${RECORD_COLUMNS} FROM site_alarms
      WHERE resolved_at IS NULL AND site_id = ANY($1::int[]) AND ($3::text[] IS NULL OR severity = ANY($3::text[]))
      ORDER BY last_seen DESC, alarm_id DESC
      LIMIT $2`,
    [siteIds, limit, severities],
  );
  return rows.map(toRecord);
}

// Deadlock and serialization failure roll the statement back whole, so running it again is safe.
const RETRYABLE = new Set(['40P01', '40001']);

export async function withDeadlockRetry<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await work();
    } catch (err) {
      if (n >= attempts || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
      await new Promise((r) => setTimeout(r, 20 * n));
    }
  }
}
