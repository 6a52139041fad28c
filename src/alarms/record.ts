import { EQUIPMENT, type TelemetryKind } from '../equipment.js';
import { toIso } from '../time.js';

// What an alarm is to the outside: the record of the active-alarm list (contract 8), and how an
// equipment id field of AlarmDto maps to its EquipmentTypeID. Codes 1-4 are those of contract 3
// (sensor-to-equipment links); sensors get 5; a site alarm has no equipment (null, null).

export const SEVERITIES = ['critical', 'major', 'minor', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const DEFAULT_SEVERITY: Severity = 'major';

/** Who raised an alarm (contract 16): an edge device, a limit rule, or the loss of communication. */
export const SOURCES = ['edge', 'rule', 'communication'] as const;
export type AlarmSource = (typeof SOURCES)[number];

export type AlarmEquipmentField = (typeof EQUIPMENT)[TelemetryKind]['idField'];

/** The equipment an alarm may name, in the order its fields are checked. */
export const ALARM_EQUIPMENT: readonly {
  field: AlarmEquipmentField;
  kind: TelemetryKind;
  typeId: number;
}[] = (['meter', 'pump', 'tank', 'sensor'] as const).map((kind) => ({
  field: EQUIPMENT[kind].idField,
  kind,
  typeId: EQUIPMENT[kind].typeId,
}));

/** What one request of a site sends or resolves: its entries, and where each stands in the body. */
export interface SiteBatch<T> {
  siteId: number;
  items: T[];
  /** The JSON pointer of entry i in the body, for error details ('' for a single alarm, '/alarms/3' in a batch). */
  pathOf: (index: number) => string;
}

/** One alarm as the active-alarm list shows it (and as the write functions return it after their change). */
export interface AlarmRecord {
  SiteAlarmLogID: string;
  SiteID: number;
  EquipmentTypeID: number | null;
  EquipmentID: string | null;
  AlarmType: string;
  Severity: Severity;
  Message: string;
  Value: number | null;
  FirstSeen: string;
  LastSeen: string;
  Occurrences: number;
  Source: AlarmSource;
  /** When the service raised it (its arrival), whatever its timestamp says. */
  RaisedAt: string;
  AcknowledgedAt: string | null;
  /** The client id that acknowledged it. */
  AcknowledgedBy: string | null;
  /** null unless shelved (a shelf whose time has passed is not shown, even before the service ends it). */
  ShelvedUntil: string | null;
}

/** An alarm as the alarm list shows it: the active list's record and how it was resolved. */
export interface AlarmListRecord extends AlarmRecord {
  ResolvedAt: string | null;
  ResolvedBy: string | null;
  ResolveNote: string | null;
}

/** Columns of site_alarms as an AlarmRecord (times still Date: see toRecord). Unqualified, for SELECT and RETURNING alike. */
export const RECORD_COLUMNS = `alarm_id::text AS "SiteAlarmLogID", site_id AS "SiteID", equipment_type_id AS "EquipmentTypeID",
  equipment_id::text AS "EquipmentID", alarm_type AS "AlarmType", severity AS "Severity", message AS "Message",
  value AS "Value", first_seen AS "FirstSeen", last_seen AS "LastSeen", occurrences AS "Occurrences",
  source AS "Source", raised_at AS "RaisedAt", acknowledged_at AS "AcknowledgedAt", acknowledged_by AS "AcknowledgedBy",
  CASE WHEN shelved_until > now() THEN shelved_until END AS "ShelvedUntil"`;

/** RECORD_COLUMNS and the resolution, for the alarm list. */
export const LIST_COLUMNS = `${RECORD_COLUMNS}, resolved_at AS "ResolvedAt", resolved_by AS "ResolvedBy", resolve_note AS "ResolveNote"`;

/** Times as the database returns them: Date from a query, text from JSON built in SQL (a stream event). */
type DbTime = Date | string;
type TimeField = 'FirstSeen' | 'LastSeen' | 'RaisedAt' | 'AcknowledgedAt' | 'ShelvedUntil';

export type RecordRow = Omit<AlarmRecord, TimeField> & {
  FirstSeen: DbTime;
  LastSeen: DbTime;
  RaisedAt: DbTime;
  AcknowledgedAt: DbTime | null;
  ShelvedUntil: DbTime | null;
};

export type ListRow = RecordRow & {
  ResolvedAt: DbTime | null;
  ResolvedBy: string | null;
  ResolveNote: string | null;
};

const iso = (t: DbTime | null | undefined): string | null =>
  t == null ? null : toIso(new Date(t));

export function toListRecord(r: ListRow): AlarmListRecord {
  return {
    ...toRecord(r),
    ResolvedAt: iso(r.ResolvedAt),
    ResolvedBy: r.ResolvedBy,
    ResolveNote: r.ResolveNote,
  };
}

export function toRecord(r: RecordRow): AlarmRecord {
  return {
    SiteAlarmLogID: r.SiteAlarmLogID,
    SiteID: r.SiteID,
    EquipmentTypeID: r.EquipmentTypeID,
    EquipmentID: r.EquipmentID,
    AlarmType: r.AlarmType,
    Severity: r.Severity,
    Message: r.Message,
    Value: r.Value,
    FirstSeen: iso(r.FirstSeen)!,
    LastSeen: iso(r.LastSeen)!,
    Occurrences: r.Occurrences,
    // An event stored before these fields existed has none of them.
    Source: r.Source ?? 'edge',
    RaisedAt: iso(r.RaisedAt ?? r.FirstSeen)!,
    AcknowledgedAt: iso(r.AcknowledgedAt ?? null),
    AcknowledgedBy: r.AcknowledgedBy ?? null,
    ShelvedUntil: iso(r.ShelvedUntil ?? null),
  };
}

/** The dedup key of an open alarm, as text: equal for two alarms exactly when the unique index says so. */
export const keyOf = (
  typeId: number | null,
  equipmentId: number | string | null,
  alarmType: string,
) => `${typeId ?? 0}|${equipmentId ?? 0}|${alarmType}`;
