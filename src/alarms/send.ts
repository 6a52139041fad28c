import { findEquipmentSites, requireSites, type Access } from '../auth/access.js';
import { equipmentLabel, type TelemetryKind } from '../equipment.js';
import type { Queryable } from '../db/index.js';
import { badRequest, invalidField, listIds, notFound, type ErrorDetail } from '../errors.js';
import { parseEdgeTime } from '../time.js';
import {
  ALARM_EQUIPMENT,
  DEFAULT_SEVERITY,
  keyOf,
  type AlarmRecord,
  type SiteBatch,
  type Severity,
} from './record.js';
import { upsertAlarms, withDeadlockRetry, type AlarmGroup, type RaisedBy } from './store.js';

// Sending alarms (interface 4.8, contract 8): check the whole request, then store it in one
// statement, so a request that fails stores nothing.

export interface AlarmInput {
  sensorID?: number | null;
  flowMeterID?: number | null;
  sitePumpID?: number | null;
  siteTankGroupID?: number | null;
  alarmType: string;
  severity?: Severity;
  message: string;
  value?: number | null;
  timestamp: string;
}

export interface SendResult {
  SiteAlarmLogID: string;
  status: 'created' | 'duplicate';
  /** The alarm as it stands after this request (the active-alarm list's record). */
  alarm: AlarmRecord;
}

/** An alarm whose shape, time and equipment have been checked. */
export interface CheckedAlarm {
  index: number;
  equipment?: { field: string; kind: TelemetryKind; typeId: number; id: number };
  ts: number;
  input: AlarmInput;
}

const MAX_DETAILS = 20;
const EQUIPMENT_FIELDS = ALARM_EQUIPMENT.map((e) => e.field).join(', ');

/** Checks the whole batch, then stores it (one statement): a batch that fails stores nothing. */
export async function sendAlarms(
  db: Queryable,
  access: Access,
  { siteId, items: inputs, pathOf }: SiteBatch<AlarmInput>,
): Promise<SendResult[]> {
  const now = Date.now();
  const alarms = inputs.map((input, index) => parseAlarm(input, index, pathOf(index), now));
  await checkEquipment(db, access, siteId, alarms, pathOf);
  return storeAlarms(db, siteId, alarms, { source: 'edge', by: access.client.clientId });
}

/**
 * Stores alarms already checked (the request path, rules, demo data). Results in input order.
 * `raisedBy`: the Source of a new alarm and the By of its journal entry (default edge, nobody named).
 */
export async function storeAlarms(
  db: Queryable,
  siteId: number,
  alarms: CheckedAlarm[],
  raisedBy?: RaisedBy,
): Promise<SendResult[]> {
  const groups = new Map<string, AlarmGroup>();
  const keys = alarms.map((a) => {
    const e = a.equipment;
    const key = keyOf(e?.typeId ?? null, e?.id ?? null, a.input.alarmType);
    const g = groups.get(key);
    const latest = {
      severity: a.input.severity ?? DEFAULT_SEVERITY,
      message: a.input.message,
      value: a.input.value ?? null,
    };
    if (!g) {
      groups.set(key, {
        typeId: e?.typeId ?? null,
        equipmentId: e?.id ?? null,
        alarmType: a.input.alarmType,
        ...latest,
        firstSeen: a.ts,
        lastSeen: a.ts,
        occurrences: 1,
      });
    } else {
      g.occurrences++;
      g.firstSeen = Math.min(g.firstSeen, a.ts);
      if (a.ts >= g.lastSeen) Object.assign(g, latest, { lastSeen: a.ts });
    }
    return key;
  });
  // One lock order for every request: two batches sharing keys cannot wait on each other in a cycle.
  const sorted = [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
  const stored = sorted.length
    ? await withDeadlockRetry(() => upsertAlarms(db, siteId, sorted, undefined, raisedBy))
    : new Map();
  const seen = new Set<string>();
  return keys.map((key) => {
    const { created, record } = stored.get(key)!;
    const first = !seen.has(key);
    seen.add(key);
    return {
      SiteAlarmLogID: record.SiteAlarmLogID,
      status: created && first ? 'created' : 'duplicate',
      alarm: record,
    };
  });
}

/** Shape rules the schema cannot say: at most one equipment id, a usable timestamp. */
export function parseAlarm(
  input: AlarmInput,
  index: number,
  at: string,
  now = Date.now(),
): CheckedAlarm {
  const named = ALARM_EQUIPMENT.filter(
    (e) => input[e.field] !== undefined && input[e.field] !== null,
  );
  if (named.length > 1)
    throw invalidField(
      `${at}/${named[1].field}`,
      `an alarm names at most one of ${EQUIPMENT_FIELDS} (this one has ${named.map((e) => e.field).join(', ')})`,
    );
  const t = parseEdgeTime(input.timestamp, `${at}/timestamp`, now);
  const e = named[0];
  return {
    index,
    ts: t,
    input,
    equipment: e && { field: e.field, kind: e.kind, typeId: e.typeId, id: input[e.field]! },
  };
}

/**
 * Equipment that does not exist: 404 (before access, the same answer for every client). Then the
 * site: 403 when out of reach or unknown, and so is equipment of a site out of reach. Only then
 * equipment of another site the client reaches: 400 (so a client learns nothing about the equipment
 * of sites it cannot reach).
 */
async function checkEquipment(
  db: Queryable,
  access: Access,
  siteId: number,
  alarms: CheckedAlarm[],
  pathOf: (i: number) => string,
): Promise<void> {
  const byKind = new Map<TelemetryKind, number[]>();
  for (const a of alarms) {
    if (!a.equipment) continue;
    const ids = byKind.get(a.equipment.kind);
    if (ids) ids.push(a.equipment.id);
    else byKind.set(a.equipment.kind, [a.equipment.id]);
  }
  const sites = new Map(
    await Promise.all(
      [...byKind].map(
        async ([kind, ids]) => [kind, await findEquipmentSites(db, kind, ids)] as const,
      ),
    ),
  );
  const siteOf = (a: CheckedAlarm) => sites.get(a.equipment!.kind)!.get(a.equipment!.id);
  const withEquipment = alarms.filter((a) => a.equipment);
  const missing = withEquipment.filter((a) => siteOf(a) === undefined);
  if (missing.length) throw unknownEquipment(missing, pathOf);
  await requireSites(db, access, [siteId]);
  // Equipment of a site out of reach is a 403 like any other, naming nothing of it.
  access.assertSites(withEquipment.map((a) => siteOf(a)!));
  const foreign = withEquipment.filter((a) => siteOf(a) !== siteId);
  if (foreign.length) {
    const details = foreign
      .slice(0, MAX_DETAILS)
      .map((a) =>
        detail(
          `${pathOf(a.index)}/${a.equipment!.field}`,
          `${describe(a)} is not equipment of site ${siteId}`,
        ),
      );
    throw badRequest(`validation failed: ${details[0].message}${more(foreign.length)}`, details);
  }
}

function unknownEquipment(missing: CheckedAlarm[], pathOf: (i: number) => string) {
  const byKind = new Map<TelemetryKind, Set<number>>();
  for (const a of missing)
    byKind.set(
      a.equipment!.kind,
      (byKind.get(a.equipment!.kind) ?? new Set()).add(a.equipment!.id),
    );
  const several = [...byKind.values()].reduce((n, ids) => n + ids.size, 0) > 1;
  const message = [...byKind]
    .map(([kind, ids]) => `${equipmentLabel(kind)} ${listIds([...ids])}`)
    .join('; ');
  const details = missing
    .slice(0, MAX_DETAILS)
    .map((a) =>
      detail(`${pathOf(a.index)}/${a.equipment!.field}`, `${describe(a)} does not exist`),
    );
  return notFound(`${message} ${several ? 'do' : 'does'} not exist`, details);
}

const describe = (a: CheckedAlarm) => `${equipmentLabel(a.equipment!.kind)} ${a.equipment!.id}`;
const detail = (path: string, message: string): ErrorDetail => ({ path, message });
const more = (n: number) => (n > 1 ? ` (and ${n - 1} more)` : '');
