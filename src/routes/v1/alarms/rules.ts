import { Type } from '@sinclair/typebox';
import type { FastifyTypebox, TypedHandler } from '../../../http.js';
import { IntId, Measured, Nullable, securedErrors } from '../../../schemas/common.js';
import { SEVERITIES, type Severity } from '../../../alarms/record.js';
import { listAlarmRules } from '../../../alarms/rules/list.js';

// Contract 16: the limit rules of a site, as the provisioning document gives them, defaults filled.

const equipment = (what: string) =>
  Type.Optional({ ...IntId, description: `present when the rule watches a ${what}` });

export const AlarmRuleDto = Type.Object(
  {
    AlarmRuleID: IntId,
    SiteID: IntId,
    SiteSensorID: equipment('sensor'),
    SiteFlowMeterID: equipment('flow meter'),
    SitePumpID: equipment('pump'),
    SiteTankGroupID: equipment('tank group'),
    Field: Type.String({
      description: 'the numeric field of the equipment upload record (interface 2.10) it watches',
    }),
    Condition: Type.Union([Type.Literal('above'), Type.Literal('below')]),
    Limit: Measured,
    Deadband: Type.Number({ minimum: 0 }),
    DelaySeconds: Type.Integer({ minimum: 0, maximum: 86_400 }),
    AlarmType: Type.String(),
    Severity: Type.Unsafe<Severity>({ type: 'string', enum: [...SEVERITIES] }),
    Message: Nullable(
      Type.String({
        description: "the alarm's message; null: made of the rule, field, value and limit",
      }),
    ),
    Enabled: Type.Boolean(),
  },
  { title: 'AlarmRuleDto' },
);

const RULES =
  'A rule watches one numeric field of one piece of equipment and is evaluated on every stored log and reading of it ' +
  '(HTTP or MQTT) whose timestamp is not older than the newest sample it has evaluated and not ahead of the clock. Its ' +
  'condition turns true when the value is above (>) or below (<) Limit, and false again only at or below Limit − ' +
  'Deadband (above) or at or above Limit + Deadband (below). The alarm (Source rule, the rule’s equipment, AlarmType ' +
  'and Severity) is raised once the condition has held for DelaySeconds by sample timestamps, or by the clock when no ' +
  'later sample comes; it is resolved (by "rule:<AlarmRuleID>") when the condition turns false. Rules are set by the ' +
  'provisioning document (`alarmRules`, POST /v1/admin/import).';

const listRulesSchema = {
  operationId: 'listAlarmRules',
  tags: ['alarms'],
  summary: 'List the limit rules of a site',
  description: `${RULES} A site out of reach or unknown: 403.`,
  querystring: Type.Object({ siteId: IntId }),
  response: { 200: Type.Array(AlarmRuleDto), ...securedErrors(403) },
};

const listRules: TypedHandler<typeof listRulesSchema> = async (request) =>
  listAlarmRules(request.db, request.access!, request.query.siteId);

export async function alarmRuleRoutes(app: FastifyTypebox): Promise<void> {
  app.get('/alarms/rules', { config: { right: 'read' }, schema: listRulesSchema }, listRules);
}
