import type { Queryable } from '../../db/index.js';
import type { TelemetryKind } from '../../equipment.js';
import { KINDS } from '../../telemetry/kinds.js';
import type { AlarmRule } from './definition.js';
import type { RuleState } from './evaluate.js';

// The SQL of limit rules: their definitions (the import writes them, GET /v1/alarms/rules reads
// them) and the state the evaluator keeps in the same rows (the newest sample it evaluated may be
// newer in alarm_rule_cursor.unsaved: evaluator.ts).

const RULE_COLUMNS = `rule_id AS id, site_id AS "siteId", kind, equipment_id AS "equipmentId", field,
  condition, limit_value AS "limit", deadband, delay_seconds AS "delaySeconds", alarm_type AS "alarmType",
  severity, message, enabled`;
const STATE_COLUMNS = `last_ts AS "lastTs", last_value AS "lastValue", active, active_since AS since, raised,
  alarm_id::text AS "alarmId"`;

/** A rule with its state, as the evaluator holds it. */
export interface RuleWithState {
  rule: AlarmRule;
  state: RuleState;
  /** The alarm it last raised (or bumped), if any. */
  alarmId: string | null;
  /** The state and alarm as its row holds them (when loaded). */
  saved: { state: RuleState; alarmId: string | null };
}

type Row = AlarmRule & {
  lastTs: Date | null;
  lastValue: number | null;
  active: boolean;
  since: Date | null;
  raised: boolean;
  alarmId: string | null;
};

const toRuleWithState = (r: Row): RuleWithState => {
  const { lastTs, lastValue, active, since, raised, alarmId, ...rule } = r;
  const state: RuleState = {
    lastTs: lastTs ? lastTs.getTime() : null,
    lastValue,
    active,
    since: since ? since.getTime() : null,
    raised,
  };
  return { rule, state, alarmId, saved: { state, alarmId } };
};

/** The rules of a site, by id. */
export async function listSiteRules(db: Queryable, siteId: number): Promise<AlarmRule[]> {
  return db.query<AlarmRule>(
    `SELECT ${RULE_COLUMNS} FROM alarm_rules WHERE site_id = $1 ORDER BY rule_id LIMIT 100000`,
    [siteId],
  );
}

/** Rules by id (any state), for the import: what a rule was before it changes. */
export async function findRules(db: Queryable, ids: number[]): Promise<RuleWithState[]> {
  if (!ids.length) return [];
  const rows = await db.query<Row>(
    `SELECT ${RULE_COLUMNS}, ${STATE_COLUMNS} FROM alarm_rules WHERE rule_id = ANY($1::int[]) FOR UPDATE`,
    [ids],
  );
  return rows.map(toRuleWithState);
}

/**
 * The enabled rules of the given equipment, those whose delay the clock may have ended by `now`,
 * and those of `also` (by id); locked for the evaluator's transaction.
 */
export async function loadRulesToEvaluate(
  db: Queryable,
  equipment: { kind: TelemetryKind; id: number }[],
  now: number,
  also: number[] = [],
): Promise<RuleWithState[]> {
  const rows = await db.query<Row>(
    `SELECT ${RULE_COLUMNS}, ${STATE_COLUMNS} FROM alarm_rules
      WHERE rule_id IN (
        SELECT r.rule_id FROM unnest($1::text[], $2::int[]) AS e(kind, id)
          CROSS JOIN LATERAL (SELECT rule_id FROM alarm_rules WHERE kind = e.kind AND equipment_id = e.id AND enabled OFFSET 0) r
        UNION
        SELECT rule_id FROM alarm_rules
         WHERE active AND NOT raised AND enabled AND active_since <= $3::timestamptz
           AND active_since + delay_seconds * interval '1 second' <= $3::timestamptz
        UNION
        SELECT rule_id FROM alarm_rules WHERE rule_id = ANY($4::int[]) AND enabled)
      ORDER BY rule_id FOR UPDATE`,
    [equipment.map((e) => e.kind), equipment.map((e) => e.id), new Date(now).toISOString(), also],
  );
  return rows.map(toRuleWithState);
}

/** Which of the alarms are still unresolved. */
export async function openAlarms(db: Queryable, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await db.query<{ id: string }>(
    `SELECT alarm_id::text AS id FROM site_alarms WHERE alarm_id = ANY($1::int8[]) AND resolved_at IS NULL`,
    [ids],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * The stored logs of each rule's equipment from `from` to `to` (epoch ms) not older than its newest
 * evaluated sample, in time order: [rule index, ts, value of the rule's field].
 */
export async function readLogSamples(
  db: Queryable,
  kind: TelemetryKind,
  wanted: { equipmentId: number; column: string; from: number; to: number; after: number | null }[],
  limit: number,
): Promise<{ i: number; ts: Date; v: number | null }[]> {
  if (!wanted.length) return [];
  const spec = KINDS[kind];
  const columns = [...new Set(wanted.map((w) => w.column))];
  // One statement per kind: each rule's range by key (a lateral lookup), its field picked by name.
  // Rows only: the rules read recent logs, and only days long past are archived (archive/days.ts).
  const pick = `CASE w.col ${columns.map((c, n) => `WHEN $${n + 7} THEN l.${c}::float8`).join(' ')} END`;
  return db.query<{ i: number; ts: Date; v: number | null }>(
    `SELECT w.i, l.ts, ${pick} AS v
       FROM unnest($1::int[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::timestamptz[])
            WITH ORDINALITY AS w(eq, col, lo, hi, after, i)
      CROSS JOIN LATERAL (
        SELECT ts, ${columns.map((c) => `x.${c}`).join(', ')} FROM ${spec.table} x
         WHERE x.${spec.idColumn} = w.eq AND x.ts >= GREATEST(w.lo, COALESCE(w.after, w.lo)) AND x.ts <= w.hi
         ORDER BY x.ts LIMIT $6 OFFSET 0) l
      ORDER BY w.i, l.ts`,
    [
      wanted.map((w) => w.equipmentId),
      wanted.map((w) => w.column),
      wanted.map((w) => new Date(w.from).toISOString()),
      wanted.map((w) => new Date(w.to).toISOString()),
      wanted.map((w) => (w.after === null ? null : new Date(w.after).toISOString())),
      limit,
      ...columns,
    ],
  );
}

/** Saves the state of the rules evaluated. */
export async function saveStates(db: Queryable, rules: RuleWithState[]): Promise<void> {
  if (!rules.length) return;
  const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
  await db.query(
    `UPDATE alarm_rules AS r SET last_ts = s.last_ts, last_value = s.last_value, active = s.active,
            active_since = s.since, raised = s.raised, alarm_id = s.alarm_id
       FROM unnest($1::int[], $2::timestamptz[], $3::float8[], $4::bool[], $5::timestamptz[], $6::bool[], $7::int8[])
            AS s(id, last_ts, last_value, active, since, raised, alarm_id)
      WHERE r.rule_id = s.id`,
    [
      rules.map((r) => r.rule.id),
      rules.map((r) => iso(r.state.lastTs)),
      rules.map((r) => r.state.lastValue),
      rules.map((r) => r.state.active),
      rules.map((r) => iso(r.state.since)),
      rules.map((r) => r.state.raised),
      rules.map((r) => r.alarmId),
    ],
  );
}

/**
 * Upserts the rules of an import: a rule whose equipment, field or alarm type changed, or that is
 * disabled, starts afresh (`reset`). Returns how many were new or changed.
 */
export async function upsertRules(
  db: Queryable,
  rules: AlarmRule[],
  reset: number[],
  stamp: Date,
): Promise<number> {
  if (!rules.length) return 0;
  const col = <T>(f: (r: AlarmRule) => T) => rules.map(f);
  const [{ n }] = await db.query<{ n: number }>(
    `WITH up AS (
       INSERT INTO alarm_rules AS a (rule_id, site_id, kind, equipment_id, field, condition, limit_value, deadband,
                                   delay_seconds, alarm_type, severity, message, enabled, updated_at)
       SELECT * , $14::timestamptz FROM unnest($1::int[], $2::int[], $3::text[], $4::int[], $5::text[], $6::text[],
              $7::float8[], $8::float8[], $9::int[], $10::text[], $11::text[], $12::text[], $13::bool[])
       ON CONFLICT (rule_id) DO UPDATE SET site_id = EXCLUDED.site_id, kind = EXCLUDED.kind,
         equipment_id = EXCLUDED.equipment_id, field = EXCLUDED.field, condition = EXCLUDED.condition,
         limit_value = EXCLUDED.limit_value, deadband = EXCLUDED.deadband, delay_seconds = EXCLUDED.delay_seconds,
         alarm_type = EXCLUDED.alarm_type, severity = EXCLUDED.severity, message = EXCLUDED.message,
         enabled = EXCLUDED.enabled, updated_at = EXCLUDED.updated_at,
         last_ts = CASE WHEN a.rule_id = ANY($15::int[]) THEN NULL ELSE a.last_ts END,
         last_value = CASE WHEN a.rule_id = ANY($15::int[]) THEN NULL ELSE a.last_value END,
         active = a.active AND NOT a.rule_id = ANY($15::int[]),
         active_since = CASE WHEN a.rule_id = ANY($15::int[]) THEN NULL ELSE a.active_since END,
         raised = a.raised AND NOT a.rule_id = ANY($15::int[]),
         alarm_id = CASE WHEN a.rule_id = ANY($15::int[]) THEN NULL ELSE a.alarm_id END
       WHERE (a.site_id, a.kind, a.equipment_id, a.field, a.condition, a.limit_value, a.deadband, a.delay_seconds,
              a.alarm_type, a.severity, a.message, a.enabled)
             IS DISTINCT FROM (EXCLUDED.site_id, EXCLUDED.kind, EXCLUDED.equipment_id, EXCLUDED.field, EXCLUDED.condition,
              EXCLUDED.limit_value, EXCLUDED.deadband, EXCLUDED.delay_seconds, EXCLUDED.alarm_type, EXCLUDED.severity,
              EXCLUDED.message, EXCLUDED.enabled)
       RETURNING 1)
     SELECT count(*)::int AS n FROM up`,
    [
      col((r) => r.id),
      col((r) => r.siteId),
      col((r) => r.kind),
      col((r) => r.equipmentId),
      col((r) => r.field),
      col((r) => r.condition),
      col((r) => r.limit),
      col((r) => r.deadband),
      col((r) => r.delaySeconds),
      col((r) => r.alarmType),
      col((r) => r.severity),
      col((r) => r.message),
      col((r) => r.enabled),
      stamp.toISOString(),
      reset,
    ],
  );
  return n;
}

export async function deleteRules(db: Queryable, ids: number[]): Promise<number> {
  if (!ids.length) return 0;
  const rows = await db.query(
    `DELETE FROM alarm_rules WHERE rule_id = ANY($1::int[]) RETURNING 1`,
    [ids],
  );
  return rows.length;
}
