import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Access } from '../../../auth/access.js';
import type { Queryable } from '../../../db/index.js';
import { EQUIPMENT, TELEMETRY_KINDS } from '../../../equipment.js';
import type { Format } from '../../../export/records.js';
import type { FastifyTypebox } from '../../../http.js';
import { openSummaries, type Download } from '../../../telemetry/download/index.js';
import { openRawSensorLogs } from '../../../telemetry/download/raw.js';
import { negotiate, sendRecords } from '../records.js';
import { RAW_ROUTE, summaryLoadRoute } from './download-schema.js';

// Interface 4.4, contract 6: four summary downloads and the raw sensor download.

/** An engine's download: checks the body (400/404/403) and opens its records in the format. */
type OpenDownload<B> = (
  db: Queryable,
  access: Access,
  body: B,
  format: Format,
) => Promise<Download>;

/** Answers a download route with the engine's records, JSON or CSV as the Accept header prefers. */
export async function answerDownload<B>(
  request: FastifyRequest & { body: B },
  reply: FastifyReply,
  open: OpenDownload<B>,
): Promise<FastifyReply> {
  const answer = negotiate(request);
  const { fields, pages } = await open(request.db, request.access!, request.body, answer.format);
  return sendRecords(reply, answer, fields, pages);
}

export async function downloadRoutes(app: FastifyTypebox): Promise<void> {
  const max = app.settings.MAX_BATCH;
  for (const kind of TELEMETRY_KINDS) {
    const { pathSegment, idsField } = EQUIPMENT[kind];
    // POST /sensors/logs/load, /meters/logs/load, /pumps/logs/load and /tanks/logs/load: a kind's
    // summaries, its ids in the body's field of the kind (sensorIds, meterIds…).
    app.post(
      `/${pathSegment}/logs/load`,
      summaryLoadRoute(kind, max),
      async function loadSummaries(request, reply) {
        return answerDownload(request, reply, (db, access, body, format) =>
          openSummaries(db, access, kind, { ...body, ids: body[idsField] }, `/${idsField}`, format),
        );
      },
    );
  }

  app.post('/sensors/logs/raw', RAW_ROUTE, async function loadSensorRawLogs(request, reply) {
    return answerDownload(request, reply, openRawSensorLogs);
  });
}
