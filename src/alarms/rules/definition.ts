import { EQUIPMENT, TELEMETRY_KINDS, type TelemetryKind } from '../../equipment.js';
import { KINDS } from '../../telemetry/kinds.js';
import { DEFAULT_SEVERITY, type Severity } from '../record.js';
import type { RuleLimits } from './evaluate.js';

// A limit rule as the provisioning document and GET /v1/alarms/rules name it (contract 16), and as
// the evaluator reads it: one equipment (by one id field of its kind), one numeric field of that
// kind's upload record (interface 2.10).

/** A rule as the document gives it (optional fields absent). */
export interface AlarmRuleIn extends Record<string, unknown> {
  AlarmRuleID: number;
  SiteSensorID?: number;
  SiteFlowMeterID?: number;
  SitePumpID?: number;
  SiteTankGroupID?: number;
  Field?: string;
  Condition: 'above' | 'below';
  Limit: number;
  Deadband?: number;
  DelaySeconds?: number;
  AlarmType: string;
  Severity?: Severity;
  Message?: string | null;
  Enabled?: boolean;
  /** Removes the rule (its open alarm is resolved). */
  Deleted?: boolean;
}

/** A rule with every field filled, as stored. */
export interface AlarmRule extends RuleLimits {
  id: number;
  siteId: number;
  kind: TelemetryKind;
  equipmentId: number;
  field: string;
  alarmType: string;
  severity: Severity;
  message: string | null;
  enabled: boolean;
}

/** The fields of a kind's record a rule may watch: its numbers. */
export const numericFields = (kind: TelemetryKind): string[] =>
  KINDS[kind].fields.filter((f) => f.type === 'float8' || f.type === 'int4').map((f) => f.name);

/** The log column of a field. */
export const columnOf = (kind: TelemetryKind, field: string): string =>
  KINDS[kind].fields.find((f) => f.name === field)!.column;

export const ID_FIELDS = TELEMETRY_KINDS.map((k) => EQUIPMENT[k].listIdField);

/** The document's rule with its defaults, or the reason it is wrong (`path` names the field). */
export function toRule(
  r: AlarmRuleIn,
  siteOf: (kind: TelemetryKind, id: number, path: string) => number,
  path: string,
): AlarmRule | { path: string; reason: string } {
  const named = TELEMETRY_KINDS.filter((k) => r[EQUIPMENT[k].listIdField] !== undefined);
  if (named.length !== 1)
    return { path, reason: `must name exactly one of ${ID_FIELDS.join(', ')}` };
  const kind = named[0];
  const idField = EQUIPMENT[kind].listIdField;
  const equipmentId = r[idField] as number;
  const siteId = siteOf(kind, equipmentId, `${path}.${idField}`);
  const fields = numericFields(kind);
  const field = r.Field ?? (kind === 'sensor' ? 'value' : undefined);
  if (field === undefined)
    return {
      path: `${path}.Field`,
      reason: `is required for a ${EQUIPMENT[kind].label}: one of ${fields.join(', ')}`,
    };
  if (!fields.includes(field))
    return {
      path: `${path}.Field`,
      reason: `${field} is not a numeric field of a ${EQUIPMENT[kind].label} (${fields.join(', ')})`,
    };
  return {
    id: r.AlarmRuleID,
    siteId,
    kind,
    equipmentId,
    field,
    condition: r.Condition,
    limit: r.Limit,
    deadband: r.Deadband ?? 0,
    delaySeconds: r.DelaySeconds ?? 0,
    alarmType: r.AlarmType,
    severity: r.Severity ?? DEFAULT_SEVERITY,
    message: r.Message ?? null,
    enabled: r.Enabled ?? true,
  };
}

/** The alarm's message: the rule's own, else rule, field, value and limit. */
export function messageOf(rule: AlarmRule, value: number): string {
  if (rule.message) return rule.message;
  const what = `${EQUIPMENT[rule.kind].label} ${rule.equipmentId} ${rule.field}`;
  return `rule ${rule.id}: ${what} ${value} is ${rule.condition} the limit ${rule.limit}`;
}

/** A rule as GET /v1/alarms/rules answers it: the import's names, every field filled. */
export interface AlarmRuleOut {
  AlarmRuleID: number;
  SiteID: number;
  SiteSensorID?: number;
  SiteFlowMeterID?: number;
  SitePumpID?: number;
  SiteTankGroupID?: number;
  Field: string;
  Condition: 'above' | 'below';
  Limit: number;
  Deadband: number;
  DelaySeconds: number;
  AlarmType: string;
  Severity: Severity;
  Message: string | null;
  Enabled: boolean;
}

export function toDto(rule: AlarmRule): AlarmRuleOut {
  return {
    AlarmRuleID: rule.id,
    SiteID: rule.siteId,
    [EQUIPMENT[rule.kind].listIdField]: rule.equipmentId,
    Field: rule.field,
    Condition: rule.condition,
    Limit: rule.limit,
    Deadband: rule.deadband,
    DelaySeconds: rule.delaySeconds,
    AlarmType: rule.alarmType,
    Severity: rule.severity,
    Message: rule.message,
    Enabled: rule.enabled,
  };
}
