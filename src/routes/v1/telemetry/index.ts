import type { Static, TArray, TObject, TSchema } from '@sinclair/typebox';
import type { FastifyTypebox } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import { equipmentLabel } from '../../../equipment.js';
import { idPath } from '../../../telemetry/equipment.js';
import type { Role } from '../../../telemetry/jobs.js';
import { KIND_LABELS, phrase, type Entry, type TelemetryKind } from '../../../telemetry/kinds.js';
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

/** What one upload route takes, and how its body becomes entries. */
interface Upload<S extends TSchema> {
  role: Role;
  /** The body's schema, for the batch limit (MAX_BATCH). */
  body: (max: number) => S;
  /** The body's entries; its schema has checked the shape of each record. */
  entries: (body: Static<S>) => Entry[];
  /** Where an entry's id field is in the body (errors name it). */
  idPath: (e: Entry) => string;
  operationId: string;
  summary: string;
}

type Readings = TObject<{ readings: TArray<TObject> }>;

const operationOf = (kind: TelemetryKind, role: Role) =>
  `upload${kind[0].toUpperCase()}${kind.slice(1)}${role === 'log' ? 'Log' : 'Reading'}`;

/** One record of a kind: a log, or a live reading. */
const uploadOne = (kind: TelemetryKind, role: Role): Upload<TObject> => ({
  role,
  body: () => (role === 'log' ? LOG_DTO : READING_DTO)[kind],
  entries: (body) => [parseEntry(kind, role, body)],
  idPath: idPath('', true),
  operationId: operationOf(kind, role),
  summary: `Upload one ${role === 'log' ? '' : 'live '}${equipmentLabel(kind)} ${role}`,
});

/** One log of a kind. */
const uploadLog = (kind: TelemetryKind) => uploadOne(kind, 'log');

/** One live reading of a kind. */
const uploadReading = (kind: TelemetryKind) => uploadOne(kind, 'reading');

/** A batch of logs of a kind: a bare array. */
const uploadLogBatch = (kind: TelemetryKind): Upload<TArray<TObject>> => ({
  role: 'log',
  body: (max) => logBatch(kind, max),
  entries: (body) => parseEntries(kind, 'log', body),
  idPath: idPath('', false),
  operationId: `${operationOf(kind, 'log')}Batch`,
  summary: `Upload a batch of ${equipmentLabel(kind)} logs (a bare array)`,
});

/** A batch of live readings of a kind: { readings: [...] }. */
const uploadReadingBatch = (kind: TelemetryKind): Upload<Readings> => ({
  role: 'reading',
  body: (max) => readingBatch(kind, max),
  entries: (body) => parseEntries(kind, 'reading', body.readings, '/readings'),
  idPath: idPath('/readings', false),
  operationId: `${operationOf(kind, 'reading')}Batch`,
  summary: `Upload a batch of live ${equipmentLabel(kind)} readings`,
});

/** Logs of every kind, each routed by its id field. */
const uploadGenericLogs = (): Upload<TArray<TObject>> => ({
  role: 'log',
  body: genericLogs,
  entries: (body) => parseGeneric('log', body),
  idPath: idPath('', false),
  operationId: 'uploadGenericLogs',
  summary: `Upload mixed ${phrase(KIND_LABELS, 'and')} logs, each routed by its id field`,
});

/** Live readings of every kind, each routed by its id field. */
const uploadGenericReadings = (): Upload<Readings> => ({
  role: 'reading',
  body: genericReadings,
  entries: (body) => parseGeneric('reading', body.readings, '/readings'),
  idPath: idPath('/readings', false),
  operationId: 'uploadGenericReadings',
  summary: 'Upload mixed live readings, each routed by its id field',
});

export async function telemetryRoutes(app: FastifyTypebox): Promise<void> {
  const { settings, telemetry } = app;

  /** Stores the entries of an upload's body for the client; 201 with the counts once committed. */
  const post = <S extends TSchema>(url: string, upload: Upload<S>) => {
    app.post(
      url,
      {
        // "Could not be stored", whatever part of the request met the unavailable database (token, lookup, write);
        // answered within WRITE_TIMEOUT_MS of its arrival.
        config: {
          right: 'upload',
          whenUnavailable: 500,
          answerWithinMs: settings.WRITE_TIMEOUT_MS,
        },
        schema: {
          operationId: upload.operationId,
          tags: ['telemetry upload'],
          summary: upload.summary,
          description: DESCRIPTION[upload.role],
          body: upload.body(settings.MAX_BATCH),
          // Interface 4.6 lists 500 ("could not be stored") for some uploads only; every upload answers it when the database fails.
          response: { 201: UploadResponse, ...UPLOAD_ERRORS },
        },
      },
      async function storeUpload(request, reply) {
        // The whole upload ends by the request's deadline (plugins/deadline.ts).
        const counts = await telemetry.store(
          request.access!,
          upload.role,
          upload.entries(request.body),
          upload.idPath,
          request.deadline,
        );
        return reply.status(201).send(counts);
      },
    );
  };

  post('/edge/logs/sensor', uploadLog('sensor'));
  post('/edge/logs/sensor/batch', uploadLogBatch('sensor'));
  post('/edge/readings/sensor', uploadReading('sensor'));
  post('/edge/readings/sensor/batch', uploadReadingBatch('sensor'));
  post('/edge/logs/meter', uploadLog('meter'));
  post('/edge/logs/meter/batch', uploadLogBatch('meter'));
  post('/edge/readings/meter', uploadReading('meter'));
  post('/edge/readings/meter/batch', uploadReadingBatch('meter'));
  post('/edge/logs/pump', uploadLog('pump'));
  post('/edge/logs/pump/batch', uploadLogBatch('pump'));
  post('/edge/readings/pump', uploadReading('pump'));
  post('/edge/readings/pump/batch', uploadReadingBatch('pump'));
  post('/edge/logs/tank', uploadLog('tank'));
  post('/edge/logs/tank/batch', uploadLogBatch('tank'));
  post('/edge/readings/tank', uploadReading('tank'));
  post('/edge/readings/tank/batch', uploadReadingBatch('tank'));
  post('/edge/logs/generic', uploadGenericLogs());
  post('/edge/readings/generic', uploadGenericReadings());
}
