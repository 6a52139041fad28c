import type { Queryable } from '../../db/index.js';
import type { AlarmRecord, Severity } from '../record.js';
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
