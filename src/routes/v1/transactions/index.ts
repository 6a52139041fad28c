import type { TSchema } from '@sinclair/typebox';
import type { FastifyTypebox, TypedHandler } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import { parseRange } from '../../../time.js';
import { requireSiteCameras, requireSites } from '../../../transactions/sites.js';
import { transactionLogFields, transactionPages } from '../../../transactions/logs.js';
import { CHANGE_LOG_FIELDS, changeLogPages } from '../../../transactions/change-logs.js';
import { JSON_ONLY, negotiate, sendRecords } from '../records.js';
import {
  ChangeLogsRequestDto,
  jsonOnly,
  jsonOrCsv,
  TransactionChangeLogDto,
  TransactionLogDto,
  TransactionLogsLoadDto,
  type StreamedResponse,
} from './schema.js';

// Interface 4.5, contract 7: ticket logs and their change logs, streamed a page at a time.

const LOGS_DESCRIPTION =
  'Tickets of the requested sites with TransactionDate in [start, end) (end exclusive, at most 366 days after start), ' +
  'ordered by TransactionDate, then TransactionID, each with the UUIDs of its ticket photos. With motionCap: true also ' +
  "MotionCaptureImageIDs, the gate camera's captures of the truck; the client must then reach every camera of every " +
  'requested site. 403 when any site is out of reach or does not exist, or (motionCap) any camera is out of reach. ' +
  'Answers text/csv when Accept prefers it to application/json: a header line of the field names, one line per ' +
  'ticket, null as an empty field, an id list as one field with its UUIDs separated by spaces.';

const CHANGE_LOGS_DESCRIPTION =
  'Every later edit of a ticket (change-log records of interface 2.9) with ChangeDate in [start, end) (end exclusive, ' +
  'at most 60 days after start), ordered by ChangeDate. filters.siteIds: only those sites, 403 when one is out of reach ' +
  'or does not exist; without it, every site the client reaches. filters.ticketNums: only those tickets. An empty ' +
  'filter list is the same as none. The interface notes that this endpoint "can affect production data": here it is ' +
  'a read and changes nothing.';

/** A ticket download: a POST whose 200 is a stream of records (see records.ts). */
const downloadSchema = <B extends TSchema>(route: {
  operationId: string;
  summary: string;
  description: string;
  body: B;
  records: StreamedResponse;
}) => ({
  operationId: route.operationId,
  tags: ['transactions'],
  summary: route.summary,
  description: route.description,
  body: route.body,
  response: { 200: route.records, ...securedErrors(403, 413) },
});

const loadLogsSchema = (max: number) =>
  downloadSchema({
    operationId: 'loadTransactionLogs',
    summary: 'Load the ticket (transaction) logs of sites over a time range',
    description: LOGS_DESCRIPTION,
    body: TransactionLogsLoadDto(max),
    records: jsonOrCsv(TransactionLogDto, 'TransactionLogDto records'),
  });

const loadTransactionLogs: TypedHandler<ReturnType<typeof loadLogsSchema>> = async (
  request,
  reply,
) => {
  const { siteIds, start, end, motionCap = false } = request.body;
  const range = parseRange(start, end, 366);
  const sites = await requireSites(request.db, request.access!, siteIds);
  if (motionCap) await requireSiteCameras(request.db, request.access!, sites);
  const pages = transactionPages(request.db, { siteIds: sites, ...range, motionCap });
  return sendRecords(reply, negotiate(request), transactionLogFields(motionCap), pages);
};

const loadChangeLogsSchema = (max: number) =>
  downloadSchema({
    operationId: 'loadTransactionChangeLogs',
    summary: 'Load the change logs of tickets over a time range (read only)',
    description: CHANGE_LOGS_DESCRIPTION,
    body: ChangeLogsRequestDto(max),
    records: jsonOnly(TransactionChangeLogDto, 'change-log records'),
  });

const loadChangeLogs: TypedHandler<ReturnType<typeof loadChangeLogsSchema>> = async (
  request,
  reply,
) => {
  const { start, end, filters } = request.body;
  const range = parseRange(start, end, 60);
  const access = request.access!;
  const siteIds = filters?.siteIds?.length
    ? await requireSites(request.db, access, filters.siteIds)
    : access.siteIds;
  const ticketNumbers = filters?.ticketNums?.length ? filters.ticketNums : null;
  const pages = changeLogPages(request.db, { ...range, siteIds, ticketNumbers });
  return sendRecords(reply, JSON_ONLY, CHANGE_LOG_FIELDS, pages);
};

export async function transactionRoutes(app: FastifyTypebox): Promise<void> {
  const max = app.settings.MAX_BATCH;
  const read = { right: 'read' } as const;
  app.post(
    '/transactions/logs/load',
    { config: read, schema: loadLogsSchema(max) },
    loadTransactionLogs,
  );
  app.post(
    '/transactions/change-logs',
    { config: read, schema: loadChangeLogsSchema(max) },
    loadChangeLogs,
  );
}
