import type { TSchema } from '@sinclair/typebox';
import type { FastifyTypebox } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import { equipmentLabel } from '../../../equipment.js';
import { idPath } from '../../../telemetry/equipment.js';
import type { Role } from '../../../telemetry/jobs.js';
import { KIND_LIST, type Entry, type TelemetryKind } from '../../../telemetry/kinds.js';
import { parseEntries, parseEntry, parseGeneric } from '../../../telemetry/upload.js';
import {
  genericLogs,
  genericReadings,
  LOG_DTO,
  logBatch,
  READING_DTO,
  readingBatch,
  UploadResponse,
} from './schema.js';

// Interface 4.6 (historical logs) and 4.7 (live readings), contract 6: 18 upload routes, each
// atomic, answered 201 only after the commit.

/** A body that passed its route's schema. */
type Body = Record<string, unknown>;

const ATOMIC =
  'The request is atomic: one invalid entry (400, details name its index and field), unknown equipment (404, checked ' +
  'first) or equipment of a site out of reach (403) stores nothing of it. 201 is sent only after the commit. ' +
  "Sets the site's LastCommunication to the time the service received the upload. A database failure, or a write not " +
  "committed within WRITE_TIMEOUT_MS (10 s by default) of the request's arrival, answers 500: nothing is acknowledged, send it again.";
const DESCRIPTION = {
  log:
    'A log is keyed by (equipment, timestamp): a replayed record is counted as a duplicate and never stored twice; ' +
    'new values for a stored key replace the old ones. Within one request the last entry of a key wins. ' +
    ATOMIC,
  reading:
    "A reading replaces the equipment's current value (GET /v1/sites?dataType=additional, Current) unless it is older; " +
    'one with the same time and values is a duplicate. Readings never create logs. Within one request the newest reading ' +
    'of an equipment wins. ' +
    ATOMIC,
};

/** An upload the database cannot serve answers 500 ("could not be stored"), never 503. */
const { 503: _unavailable, ...UPLOAD_ERRORS } = securedErrors(403, 404, 413, 415, 500);

export async function telemetryRoutes(app: FastifyTypebox): Promise<void> {
  const { settings, telemetry } = app;

  const route = <B>(
    path: string,
    operationId: string,
    role: Role,
    body: TSchema,
    summary: string,
    parse: (body: B) => Entry[],
    shape: { single: boolean; prefix: string },
  ) => {
    app.post(
      `/edge/${path}`,
      {
        // "Could not be stored", whatever part of the request met the unavailable database (token, lookup, write);
        // answered within WRITE_TIMEOUT_MS of its arrival.
        config: { whenUnavailable: 500, answerWithinMs: settings.WRITE_TIMEOUT_MS },
        schema: {
          operationId,
          tags: ['telemetry upload'],
          summary,
          description: DESCRIPTION[role],
          body,
          // Interface 4.6 lists 500 ("could not be stored") for some uploads only; every upload answers it when the database fails.
          response: { 201: UploadResponse, ...UPLOAD_ERRORS },
        },
      },
      async (request, reply) => {
        const entries = parse(request.body as B);
        const pathOf = idPath(shape.prefix, shape.single);
        // The whole upload ends by the request's deadline (plugins/deadline.ts).
        const counts = await telemetry.store(
          request.access!,
          role,
          entries,
          pathOf,
          request.deadline,
        );
        return reply.status(201).send(counts);
      },
    );
  };

  const max = settings.MAX_BATCH;
  const one = { single: true, prefix: '' };
  const batch = (prefix: string) => ({ single: false, prefix });
  // Per role: its path, operationId suffix, single and batch bodies and summaries, and where a batch keeps its records.
  const ROLES = {
    log: {
      path: 'logs',
      op: 'Log',
      single: (kind: TelemetryKind) => LOG_DTO[kind],
      many: (kind: TelemetryKind) => logBatch(kind, max),
      summaries: (l: string) => [
        `Upload one ${l} log`,
        `Upload a batch of ${l} logs (a bare array)`,
      ],
      records: (b: Body[] | { readings: Body[] }) => b as Body[],
      prefix: '',
    },
    reading: {
      path: 'readings',
      op: 'Reading',
      single: (kind: TelemetryKind) => READING_DTO[kind],
      many: (kind: TelemetryKind) => readingBatch(kind, max),
      summaries: (l: string) => [
        `Upload one live ${l} reading`,
        `Upload a batch of live ${l} readings`,
      ],
      records: (b: Body[] | { readings: Body[] }) => (b as { readings: Body[] }).readings,
      prefix: '/readings',
    },
  };
  for (const { kind } of KIND_LIST)
    for (const role of ['log', 'reading'] as const) {
      const r = ROLES[role];
      const [oneSummary, batchSummary] = r.summaries(equipmentLabel(kind));
      const op = `upload${kind[0].toUpperCase()}${kind.slice(1)}${r.op}`;
      const parseOne = (b: Body) => [parseEntry(kind, role, b)];
      route(`${r.path}/${kind}`, op, role, r.single(kind), oneSummary, parseOne, one);
      const parseBatch = (b: Body[] | { readings: Body[] }) =>
        parseEntries(kind, role, r.records(b), r.prefix);
      route(
        `${r.path}/${kind}/batch`,
        `${op}Batch`,
        role,
        r.many(kind),
        batchSummary,
        parseBatch,
        batch(r.prefix),
      );
    }
  route(
    'logs/generic',
    'uploadGenericLogs',
    'log',
    genericLogs(max),
    'Upload mixed sensor, flow meter, pump and tank group logs, each routed by its id field',
    (b: Body[]) => parseGeneric('log', b),
    batch(''),
  );
  route(
    'readings/generic',
    'uploadGenericReadings',
    'reading',
    genericReadings(max),
    'Upload mixed live readings, each routed by its id field',
    (b: { readings: Body[] }) => parseGeneric('reading', b.readings, '/readings'),
    batch('/readings'),
  );
}
