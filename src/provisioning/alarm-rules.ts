import { Type } from '@sinclair/typebox';
import type { Queryable } from '../db/index.js';
import { EQUIPMENT, TELEMETRY_KINDS, type TelemetryKind } from '../equipment.js';
import { SEVERITIES } from '../alarms/record.js';
import { toRule, type AlarmRule } from '../alarms/rules/definition.js';
import { resolveOwnAlarms } from '../alarms/rules/raise.js';
import { deleteRules, findRules, upsertRules } from '../alarms/rules/repository.js';
import { IntId, Measured } from '../schemas/common.js';
import { ImportError, type References } from './checks.js';
import type { ProvisioningDocument } from './document.js';

// The document's `alarmRules` (contract 16): limit rules on one numeric field of one piece of
// equipment. Checked with the rest of the document (unknown equipment or field: the import fails,
// naming it); a rule that changes what it watches, or is disabled or deleted, resolves the alarm it
// raised and starts afresh.

export const AlarmRuleSchema = Type.Object({
  AlarmRuleID: IntId,
  SiteSensorID: Type.Optional(IntId),
  SiteFlowMeterID: Type.Optional(IntId),
  SitePumpID: Type.Optional(IntId),
  SiteTankGroupID: Type.Optional(IntId),
  Field: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  Condition: Type.Union([Type.Literal('above'), Type.Literal('below')]),
  Limit: Measured,
  Deadband: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15 })),
  DelaySeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
  AlarmType: Type.String({ minLength: 1, maxLength: 64 }),
  Severity: Type.Optional(Type.Union(SEVERITIES.map((s) => Type.Literal(s)))),
  Message: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
  Enabled: Type.Optional(Type.Boolean()),
  Deleted: Type.Optional(
    Type.Boolean({ description: 'true removes the rule (its open alarm is resolved)' }),
  ),
});

/** The equipment the rules name, for References.load: kind -> ids. */
export function alarmRuleEquipment(doc: ProvisioningDocument): Map<TelemetryKind, number[]> {
  const out = new Map<TelemetryKind, number[]>();
  doc.alarmRules?.forEach((r) => {
    for (const k of TELEMETRY_KINDS) {
      const v = r[EQUIPMENT[k].listIdField];
      if (typeof v === 'number') out.set(k, [...(out.get(k) ?? []), v]);
    }
  });
  return out;
}

export interface CheckedRules {
  rules: AlarmRule[];
  deleted: number[];
}

/** Checks every rule (one equipment, a numeric field of it); returns them with their defaults. */
export function checkAlarmRules(doc: ProvisioningDocument, refs: References): CheckedRules {
  const checked: CheckedRules = { rules: [], deleted: [] };
  doc.alarmRules?.forEach((r, i) => {
    const path = `alarmRules[${i}]`;
    const rule = toRule(r, (kind, id, at) => refs.siteOf(kind, id, at)!, path);
    if ('reason' in rule) throw new ImportError(rule.path, rule.reason);
    if (r.Deleted) checked.deleted.push(rule.id);
    else checked.rules.push(rule);
  });
  return checked;
}

/** Writes the rules in the import's transaction; returns how many were new, changed or deleted. */
export async function upsertAlarmRules(
  tx: Queryable,
  { rules, deleted }: CheckedRules,
  stamp: Date,
): Promise<number> {
  const ids = [...rules.map((r) => r.id), ...deleted];
  if (!ids.length) return 0;
  const before = new Map((await findRules(tx, ids)).map((r) => [r.rule.id, r]));
  const gone = new Set(deleted);
  const reset: number[] = [];
  const next = new Map(rules.map((r) => [r.id, r]));
  for (const id of [...before.keys()].sort((a, b) => a - b)) {
    const old = before.get(id)!;
    const now = next.get(id);
    const restart =
      gone.has(id) ||
      !now ||
      !now.enabled ||
      now.siteId !== old.rule.siteId ||
      now.kind !== old.rule.kind ||
      now.equipmentId !== old.rule.equipmentId ||
      now.field !== old.rule.field ||
      now.alarmType !== old.rule.alarmType;
    if (!restart) continue;
    reset.push(id);
    if (old.state.raised)
      await resolveOwnAlarms(
        tx,
        old.rule.siteId,
        [
          {
            typeId: EQUIPMENT[old.rule.kind].typeId,
            equipmentId: old.rule.equipmentId,
            alarmType: old.rule.alarmType,
          },
        ],
        'rule',
        `rule:${id}`,
      );
  }
  return (
    (await upsertRules(tx, rules, reset, stamp)) +
    (await deleteRules(
      tx,
      deleted.filter((id) => before.has(id)),
    ))
  );
}
