import { Type } from '@sinclair/typebox';
import type { FastifyTypebox, TypedHandler } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import { sendAlarms } from '../../../alarms/send.js';
import { listActiveAlarms, resolveAlarms } from '../../../alarms/resolve.js';
import type { SiteBatch } from '../../../alarms/record.js';
import {
  ActiveAlarmDto,
  activeFilter,
  AlarmDto,
  AlarmResolveResultDto,
  AlarmSendResultDto,
  resolveBatch,
  sendBatch,
} from './schema.js';

// Interface 3 and 4.8, contract 8: send, send a batch, resolve, list the open alarms.

/** Most alarms the active list returns when the request names no limit. */
export const ACTIVE_DEFAULT_LIMIT = 1000;

const LIFECYCLE =
  'An alarm is unresolved (active) until resolved. While an unresolved alarm with the same site, equipment ' +
  '(EquipmentTypeID + EquipmentID, or none for a site alarm) and alarmType exists, a send of that key is a duplicate: it ' +
  "returns the open alarm's SiteAlarmLogID with status duplicate, adds one to Occurrences, widens FirstSeen/LastSeen to " +
  'its timestamp (LastSeen never moves backwards) and, unless its timestamp is older than LastSeen, replaces Severity, ' +
  'Message and Value. The database holds at most one unresolved alarm per key, also under concurrent sends. Once the ' +
  'alarm is resolved, the next send of its key creates a new alarm. EquipmentTypeID: 1 flow meter, 2 pump, 3 tank group, ' +
  '5 sensor, null for a site alarm.';
const CHECKS =
  'The request is atomic: an invalid alarm (400, details name its index and field), equipment that does not exist (404, ' +
  'checked first, the same answer for every client), a site or equipment out of reach, or a site unknown (403), or equipment ' +
  'of another site the client reaches (400) stores nothing. 201 is sent after the commit.';

const tags = ['alarms'];

/** A batch body's entries as the engine takes them, each error naming its entry (`/alarms/3`). */
const batchOf = <T>({ siteId, alarms }: { siteId: number; alarms: T[] }): SiteBatch<T> => ({
  siteId,
  items: alarms,
  pathOf: (i) => `/alarms/${i}`,
});

/** What the client is told of a sent or resolved alarm (the engine returns its record too). */
const idAndStatus = <S>({ SiteAlarmLogID, status }: { SiteAlarmLogID: string; status: S }) => ({
  SiteAlarmLogID,
  status,
});

const sendAlarmSchema = {
  operationId: 'sendAlarm',
  tags,
  summary: 'Send one alarm',
  description: `${LIFECYCLE} ${CHECKS}`,
  body: AlarmDto,
  response: { 201: AlarmSendResultDto, ...securedErrors(403, 404, 413) },
};

const sendAlarm: TypedHandler<typeof sendAlarmSchema> = async (request, reply) => {
  const { siteId, ...alarm } = request.body;
  const batch = { siteId, items: [alarm], pathOf: () => '' };
  const [sent] = await sendAlarms(request.db, request.access!, batch);
  return reply.status(201).send(idAndStatus(sent));
};

const sendAlarmBatchSchema = (max: number) => ({
  operationId: 'sendAlarmBatch',
  tags,
  summary: 'Send several alarms of one site',
  description:
    `Answers one AlarmSendResultDto per alarm, in request order. Alarms of one key in one request count as ` +
    `successive sends: the first may be created, the next are its duplicates. ${LIFECYCLE} ${CHECKS}`,
  body: sendBatch(max),
  response: { 201: Type.Array(AlarmSendResultDto), ...securedErrors(403, 404, 413) },
});

const sendAlarmBatch: TypedHandler<ReturnType<typeof sendAlarmBatchSchema>> = async (
  request,
  reply,
) => {
  const sent = await sendAlarms(request.db, request.access!, batchOf(request.body));
  return reply.status(201).send(sent.map(idAndStatus));
};

const resolveAlarmsSchema = (max: number) => ({
  operationId: 'resolveAlarms',
  tags,
  summary: 'Resolve alarms of one site',
  description:
    'Moves each alarm from unresolved to resolved, recording the time, the client and the note. Answers one ' +
    'AlarmResolveResultDto per entry, in request order: resolved, or already_resolved when it was resolved before ' +
    '(of two concurrent resolves one gets resolved, the other already_resolved; an id listed twice is resolved by its ' +
    'first entry). All or nothing: a missing siteId or SiteAlarmLogID (400), a site out of reach or unknown (403), or ' +
    'an id that is not an alarm of that site (404, details name each) resolves nothing.',
  body: resolveBatch(max),
  response: { 200: Type.Array(AlarmResolveResultDto), ...securedErrors(403, 404, 413) },
});

const resolveSiteAlarms: TypedHandler<ReturnType<typeof resolveAlarmsSchema>> = async (request) => {
  const results = await resolveAlarms(request.db, request.access!, batchOf(request.body));
  return results.map(idAndStatus);
};

/** The active list's limit when the request names none: the default, within the batch bound. */
const defaultActiveLimit = (max: number) => Math.min(ACTIVE_DEFAULT_LIMIT, max);

const listActiveAlarmsSchema = (max: number) => ({
  operationId: 'listActiveAlarms',
  tags,
  summary: 'List the unresolved alarms of some sites',
  description:
    `Only unresolved alarms, newest first (by LastSeen, then SiteAlarmLogID, both descending), at most \`limit\` ` +
    `(default ${ACTIVE_DEFAULT_LIMIT}, at most ${max}): the newest ones. A site out of reach or unknown: 403 for the ` +
    `whole request. \`severities\` keeps only alarms of those severities (before the limit). GET /v1/sites?dataType=additional counts them per site (ActiveAlarmCount). ${LIFECYCLE}`,
  body: activeFilter(max, defaultActiveLimit(max)),
  response: { 200: Type.Array(ActiveAlarmDto), ...securedErrors(403, 413) },
});

const listActive: TypedHandler<ReturnType<typeof listActiveAlarmsSchema>> = async (request) => {
  const { siteIds, limit, severities } = request.body;
  const max = request.server.settings.MAX_BATCH;
  return listActiveAlarms(
    request.db,
    request.access!,
    siteIds,
    limit ?? defaultActiveLimit(max),
    severities,
  );
};

export async function alarmRoutes(app: FastifyTypebox): Promise<void> {
  const max = app.settings.MAX_BATCH;
  // Sends are uploads from the edge: they have an upload's time (WRITE_TIMEOUT_MS), within which a
  // send whose commit is unknown (a database failover) is settled (src/alarms/store.ts).
  const upload = { right: 'upload', answerWithinMs: app.settings.WRITE_TIMEOUT_MS } as const;
  app.post('/edge/alarms', { config: upload, schema: sendAlarmSchema }, sendAlarm);
  app.post(
    '/edge/alarms/batch',
    { config: upload, schema: sendAlarmBatchSchema(max) },
    sendAlarmBatch,
  );
  app.post(
    '/edge/alarms/resolve',
    { config: { right: 'resolve' }, schema: resolveAlarmsSchema(max) },
    resolveSiteAlarms,
  );
  app.post(
    '/edge/alarms/active',
    { config: { right: 'active-alarms' }, schema: listActiveAlarmsSchema(max) },
    listActive,
  );
}
