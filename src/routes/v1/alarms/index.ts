import { Type } from '@sinclair/typebox';
import type { FastifyTypebox } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import { sendAlarms } from '../../../alarms/send.js';
import { listActiveAlarms, resolveAlarms } from '../../../alarms/resolve.js';
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

export async function alarmRoutes(app: FastifyTypebox): Promise<void> {
  const { settings } = app;
  const max = settings.MAX_BATCH;
  const tags = ['alarms'];

  app.post(
    '/edge/alarms',
    {
      schema: {
        operationId: 'sendAlarm',
        tags,
        summary: 'Send one alarm',
        description: `${LIFECYCLE} ${CHECKS}`,
        body: AlarmDto,
        response: { 201: AlarmSendResultDto, ...securedErrors(403, 404, 413) },
      },
    },
    async (request, reply) => {
      const { siteId, ...alarm } = request.body;
      const [sent] = await sendAlarms(request.db, request.access!, siteId, [alarm], () => '');
      return reply.status(201).send({ SiteAlarmLogID: sent.SiteAlarmLogID, status: sent.status });
    },
  );

  app.post(
    '/edge/alarms/batch',
    {
      schema: {
        operationId: 'sendAlarmBatch',
        tags,
        summary: 'Send several alarms of one site',
        description:
          `Answers one AlarmSendResultDto per alarm, in request order. Alarms of one key in one request count as ` +
          `successive sends: the first may be created, the next are its duplicates. ${LIFECYCLE} ${CHECKS}`,
        body: sendBatch(max),
        response: { 201: Type.Array(AlarmSendResultDto), ...securedErrors(403, 404, 413) },
      },
    },
    async (request, reply) => {
      const { siteId, alarms } = request.body;
      const sent = await sendAlarms(
        request.db,
        request.access!,
        siteId,
        alarms,
        (i) => `/alarms/${i}`,
      );
      return reply
        .status(201)
        .send(sent.map((s) => ({ SiteAlarmLogID: s.SiteAlarmLogID, status: s.status })));
    },
  );

  app.post(
    '/edge/alarms/resolve',
    {
      schema: {
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
      },
    },
    async (request) => {
      const { siteId, alarms } = request.body;
      const results = await resolveAlarms(
        request.db,
        request.access!,
        siteId,
        alarms,
        (i) => `/alarms/${i}`,
      );
      return results.map((r) => ({ SiteAlarmLogID: r.SiteAlarmLogID, status: r.status }));
    },
  );

  app.post(
    '/edge/alarms/active',
    {
      schema: {
        operationId: 'listActiveAlarms',
        tags,
        summary: 'List the unresolved alarms of some sites',
        description:
          `Only unresolved alarms, newest first (by LastSeen, then SiteAlarmLogID, both descending), at most \`limit\` ` +
          `(default ${ACTIVE_DEFAULT_LIMIT}, at most ${max}): the newest ones. A site out of reach or unknown: 403 for the ` +
          `whole request. \`severities\` keeps only alarms of those severities (before the limit). GET /v1/sites?dataType=additional counts them per site (ActiveAlarmCount). ${LIFECYCLE}`,
        body: activeFilter(max, Math.min(ACTIVE_DEFAULT_LIMIT, max)),
        response: { 200: Type.Array(ActiveAlarmDto), ...securedErrors(403, 413) },
      },
    },
    async (request) => {
      const { siteIds, limit, severities } = request.body;
      return listActiveAlarms(
        request.db,
        request.access!,
        siteIds,
        limit ?? Math.min(ACTIVE_DEFAULT_LIMIT, max),
        severities,
      );
    },
  );
}
