import type { Queryable } from '../../db/index.js';
import { keyOf, type AlarmRecord, type Severity } from '../record.js';
import { markResolved, upsertAlarms } from '../store.js';

// Alarms the service raises itself (rules, communication loss) go through the same store entry
// points as the edge's sends and resolves (so dedup, the stream's events and everything recorded
// with a change apply alike), inside the caller's transaction. Each is marked with its source, and
// each resolves only the open alarm of its key that it raised itself (contract 16).

export type AlarmSource = 'rule' | 'communication';

export interface RaisedKey {
  siteId: number;
  typeId: number | null;
  equipmentId: number | null;
  alarmType: string;
}

/**
 * Raises one alarm: created with its source (`by`, "rule:<id>" or "communication", is who raised
 * it, for the record of its changes), or, when its key is open already (from the edge, say),
 * a duplicate send of it (Occurrences + 1, LastSeen, Severity, Message and Value replaced).
 */
export async function raiseAlarm(
  tx: Queryable,
  key: RaisedKey,
  alarm: { severity: Severity; message: string; value: number | null; at: number },
  raisedBy: { source: AlarmSource; by: string },
): Promise<{ created: boolean; record: AlarmRecord }> {
  const stored = await upsertAlarms(
    tx,
    key.siteId,
    [
      {
        typeId: key.typeId,
        equipmentId: key.equipmentId,
        alarmType: key.alarmType,
        severity: alarm.severity,
        message: alarm.message,
        value: alarm.value,
        firstSeen: alarm.at,
        lastSeen: alarm.at,
        occurrences: 1,
      },
    ],
    undefined,
    raisedBy,
  );
  const result = [...stored.values()][0];
  return result;
}

/** Resolves the open alarm of each key if `source` raised it; `by` is recorded as its resolver. */
export async function resolveOwnAlarms(
  tx: Queryable,
  siteId: number,
  keys: Omit<RaisedKey, 'siteId'>[],
  source: AlarmSource,
  by: string,
): Promise<AlarmRecord[]> {
  if (!keys.length) return [];
  const rows = await tx.query<{ id: string }>(
    `SELECT a.alarm_id::text AS id
       FROM unnest($2::int[], $3::int[], $4::text[]) AS k(type_id, equipment_id, alarm_type)
       JOIN site_alarms a ON a.site_id = $1 AND a.resolved_at IS NULL
        AND COALESCE(a.equipment_type_id, 0) = COALESCE(k.type_id, 0)
        AND COALESCE(a.equipment_id, 0) = COALESCE(k.equipment_id, 0) AND a.alarm_type = k.alarm_type
      WHERE a.source = $5
      ORDER BY 1`,
    [
      siteId,
      keys.map((k) => k.typeId),
      keys.map((k) => k.equipmentId),
      keys.map((k) => k.alarmType),
      source,
    ],
  );
  if (!rows.length) return [];
  return markResolved(
    tx,
    siteId,
    rows.map((r) => ({ id: r.id, note: null })),
    by,
  );
}

/**
 * Raises several alarms (distinct keys, any sites) in one statement, each by its own `by`, as
 * raiseAlarm does one: returns, by "<site>|<key>" (keyOf), whether it was created and its record.
 */
export async function raiseAlarms(
  tx: Queryable,
  raises: (RaisedKey & {
    severity: Severity;
    message: string;
    value: number | null;
    at: number;
    by: string;
  })[],
  source: AlarmSource,
): Promise<Map<string, { created: boolean; record: AlarmRecord }>> {
  if (!raises.length) return new Map();
  const sorted = [...raises].sort(bySiteAndKey);
  return upsertAlarms(
    tx,
    null,
    sorted.map((r) => ({
      siteId: r.siteId,
      typeId: r.typeId,
      equipmentId: r.equipmentId,
      alarmType: r.alarmType,
      severity: r.severity,
      message: r.message,
      value: r.value,
      firstSeen: r.at,
      lastSeen: r.at,
      occurrences: 1,
      by: r.by,
    })),
    undefined,
    { source, by: null },
  );
}

/**
 * Resolves, for each key (distinct, any sites), its open alarm if `source` raised it, recording that
 * key's `by` as its resolver: resolveOwnAlarms for many keys at once, in two statements.
 */
export async function resolveOwnAlarmsBy(
  tx: Queryable,
  keys: (RaisedKey & { by: string })[],
  source: AlarmSource,
): Promise<AlarmRecord[]> {
  if (!keys.length) return [];
  const rows = await tx.query<{ id: string; i: number }>(
    `SELECT a.alarm_id::text AS id, k.i::int AS i
       FROM unnest($1::int[], $2::int[], $3::int[], $4::text[]) WITH ORDINALITY AS k(site_id, type_id, equipment_id, alarm_type, i)
       JOIN site_alarms a ON a.site_id = k.site_id AND a.resolved_at IS NULL
        AND COALESCE(a.equipment_type_id, 0) = COALESCE(k.type_id, 0)
        AND COALESCE(a.equipment_id, 0) = COALESCE(k.equipment_id, 0) AND a.alarm_type = k.alarm_type
      WHERE a.source = $5
      ORDER BY 1`,
    [
      keys.map((k) => k.siteId),
      keys.map((k) => k.typeId),
      keys.map((k) => k.equipmentId),
      keys.map((k) => k.alarmType),
      source,
    ],
  );
  if (!rows.length) return [];
  return markResolved(
    tx,
    null,
    rows.map((r) => ({ id: r.id, note: null, by: keys[r.i - 1].by })),
    source,
  );
}

/** By site, then key, as the edge's sends of one site lock them (src/alarms/send.ts). */
const bySiteAndKey = (a: RaisedKey, b: RaisedKey) => {
  if (a.siteId !== b.siteId) return a.siteId - b.siteId;
  const [x, y] = [
    keyOf(a.typeId, a.equipmentId, a.alarmType),
    keyOf(b.typeId, b.equipmentId, b.alarmType),
  ];
  return x < y ? -1 : x > y ? 1 : 0;
};
