import { Type } from '@sinclair/typebox';
import type { FastifyTypebox, TypedHandler } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import { acknowledgeAlarms, shelveAlarms, unshelveAlarms } from '../../../alarms/actions.js';
import { listAlarms, listJournal, MAX_RANGE_DAYS } from '../../../alarms/list.js';
import type { SiteBatch } from '../../../alarms/record.js';
import {
  AlarmAcknowledgeResultDto,
  AlarmActionDto,
  AlarmJournalFilterDto,
  AlarmJournalPageDto,
  AlarmListFilterDto,
  AlarmListPageDto,
  AlarmShelveDto,
  AlarmShelveResultDto,
  AlarmUnshelveResultDto,
} from './lifecycle-schema.js';

// Alarm management (contract 16): acknowledge, shelve and unshelve (the operator's actions; resolve
// is POST /v1/edge/alarms/resolve), the alarm list and the journal.

const tags = ['alarms'];

const ACTION_RULES =
  'All or nothing: a site out of reach or unknown (403), or an id that is not an alarm of that site (404, details ' +
  "name each; another tenant's alarm is no alarm of your site) changes nothing. One result per entry, in request " +
  'order; an alarm listed twice is changed by its first entry (with its note). Each change is an `alarm` stream ' +
  'event with that status and a journal entry (By: the client id, Note: the note). Of two concurrent requests on ' +
  'one alarm, one changes it; the other answers as if it came after.';
const RANGE_RULES = `[start, end): end exclusive, after start, at most ${MAX_RANGE_DAYS} days later (else 400). Every site must be reachable (else 403, naming none). Paged as GET /v1/sites: page from 1, perPage 1 to 500; total counts every match.`;

const batchOf = <T>({ siteId, alarms }: { siteId: number; alarms: T[] }): SiteBatch<T> => ({
  siteId,
  items: alarms,
  pathOf: (i) => `/alarms/${i}`,
});

const acknowledgeSchema = (max: number) => ({
  operationId: 'acknowledgeAlarms',
  tags,
  summary: 'Acknowledge alarms of one site',
  description:
    'Records that a person has seen each alarm (AcknowledgedAt, AcknowledgedBy), independently of resolution: an ' +
    'unresolved alarm stays active, and a resolved one can still be acknowledged. acknowledged, or ' +
    `already_acknowledged when it was before (the first acknowledgement stays). ${ACTION_RULES}`,
  body: AlarmActionDto(max),
  response: { 200: Type.Array(AlarmAcknowledgeResultDto), ...securedErrors(403, 404) },
});

const acknowledge: TypedHandler<ReturnType<typeof acknowledgeSchema>> = async (request) => {
  const results = await acknowledgeAlarms(request.db, request.access!, batchOf(request.body));
  return results.map(({ SiteAlarmLogID, status }) => ({ SiteAlarmLogID, status }));
};

const shelveSchema = (max: number) => ({
  operationId: 'shelveAlarms',
  tags,
  summary: 'Shelve alarms of one site for some minutes',
  description:
    'Sets ShelvedUntil to now + minutes (a shelved alarm again from now): a shelved alarm stays in the active list ' +
    'but sends no notification until then. When ShelvedUntil passes, the service unshelves it (an `unshelved` event ' +
    'and journal entry with By null). shelved, or already_resolved for a resolved alarm (left as it is, ' +
    `ShelvedUntil null). ${ACTION_RULES}`,
  body: AlarmShelveDto(max),
  response: { 200: Type.Array(AlarmShelveResultDto), ...securedErrors(403, 404) },
});

const shelve: TypedHandler<ReturnType<typeof shelveSchema>> = async (request) => {
  const results = await shelveAlarms(
    request.db,
    request.access!,
    batchOf(request.body),
    request.body.minutes,
  );
  return results.map(({ SiteAlarmLogID, status, alarm }) => ({
    SiteAlarmLogID,
    status,
    ShelvedUntil: alarm?.ShelvedUntil ?? null,
  }));
};

const unshelveSchema = (max: number) => ({
  operationId: 'unshelveAlarms',
  tags,
  summary: 'End the shelving of alarms of one site',
  description: `ShelvedUntil back to null: unshelved, or not_shelved when it was not shelved. ${ACTION_RULES}`,
  body: AlarmActionDto(max),
  response: { 200: Type.Array(AlarmUnshelveResultDto), ...securedErrors(403, 404) },
});

const unshelve: TypedHandler<ReturnType<typeof unshelveSchema>> = async (request) => {
  const results = await unshelveAlarms(request.db, request.access!, batchOf(request.body));
  return results.map(({ SiteAlarmLogID, status }) => ({ SiteAlarmLogID, status }));
};

const listSchema = (max: number) => ({
  operationId: 'listAlarms',
  tags,
  summary: 'List the alarms raised over a range, resolved ones included',
  description:
    'The alarms of the sites whose RaisedAt (when the service raised them) lies in the range, newest first (by ' +
    'RaisedAt, then SiteAlarmLogID, both descending), resolved ones with ResolvedAt, ResolvedBy and ResolveNote. ' +
    'state: all (default); active: the unresolved; unacknowledged: those not acknowledged, resolved or not ' +
    `(ISA-18.2's "returned to normal, unacknowledged" among them). ${RANGE_RULES}`,
  body: AlarmListFilterDto(max),
  response: { 200: AlarmListPageDto, ...securedErrors(403) },
});

const list: TypedHandler<ReturnType<typeof listSchema>> = async (request) =>
  listAlarms(request.db, request.access!, request.body);

const journalSchema = (max: number) => ({
  operationId: 'listAlarmJournal',
  tags,
  summary: 'The journal of alarm changes over a range',
  description:
    'Every change of the alarms of the sites with its Time in the range, oldest first (by Time, then EventID): ' +
    'raised, acknowledged, shelved, unshelved, resolved (and the notifications), with By (a client id, ' +
    '"rule:<AlarmRuleID>", "communication", or null for the service itself) and the Note. A duplicate send changes ' +
    "nothing but Occurrences and has no entry. With SiteAlarmLogID, only that alarm's entries; it must be an alarm " +
    `of one of the sites (else 404). ${RANGE_RULES}`,
  body: AlarmJournalFilterDto(max),
  response: { 200: AlarmJournalPageDto, ...securedErrors(403, 404) },
});

const journal: TypedHandler<ReturnType<typeof journalSchema>> = async (request) =>
  listJournal(request.db, request.access!, request.body);

export async function alarmLifecycleRoutes(app: FastifyTypebox): Promise<void> {
  const max = app.settings.MAX_BATCH;
  app.post(
    '/alarms/acknowledge',
    { config: { right: 'operate' }, schema: acknowledgeSchema(max) },
    acknowledge,
  );
  app.post('/alarms/shelve', { config: { right: 'operate' }, schema: shelveSchema(max) }, shelve);
  app.post(
    '/alarms/unshelve',
    { config: { right: 'operate' }, schema: unshelveSchema(max) },
    unshelve,
  );
  app.post('/alarms/list', { config: { right: 'read' }, schema: listSchema(max) }, list);
  app.post('/alarms/journal', { config: { right: 'read' }, schema: journalSchema(max) }, journal);
}
