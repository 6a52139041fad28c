import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyTypebox } from '../../../http.js';
import { MEDIA_TYPE, negotiateFormat, recordsBody } from '../../../export/records.js';
import { securedErrors } from '../../../schemas/common.js';
import type { TelemetryKind } from '../../../telemetry/kinds.js';
import {
  openSummaries,
  type Download,
  type SummaryBody,
} from '../../../telemetry/download/index.js';
import { openRawSensorLogs } from '../../../telemetry/download/raw.js';
import {
  idsField,
  listOrCsv,
  SensorLogsRawDto,
  SensorRawLogDto,
  SUMMARY_DTO,
  summaryLoadDto,
} from './download-schema.js';

// Interface 4.4, contract 6: four summary downloads and the raw sensor download.

const PATHS: Record<TelemetryKind, [path: string, operationId: string, label: string]> = {
  sensor: ['sensors', 'loadSensorSummaries', 'sensors'],
  meter: ['meters', 'loadMeterSummaries', 'flow meters'],
  pump: ['pumps', 'loadPumpSummaries', 'pumps'],
  tank: ['tanks', 'loadTankSummaries', 'tank groups'],
};

const SUMMARY_TEXT =
  'Summaries over [start, end) in buckets of the interval on the clock of timeZone (days of 23 or 25 hours at ' +
  'daylight-saving changes); the first and last buckets are cut at start and end. One element per equipment and ' +
  'non-empty bucket, ordered by id then bucket; a statistic no sample of the bucket carries is null. Exact: a ' +
  'summary read after an upload was answered 201 includes it (late, replayed and replacing logs too). Span at most ' +
  '366 days. Unknown ids: 404 (checked first); any id of a site out of reach: 403.';

async function send(
  request: FastifyRequest,
  reply: FastifyReply,
  download: Download,
  format = negotiateFormat(request.headers.accept),
) {
  const body = await recordsBody(format, download.fields, download.pages);
  return reply.type(MEDIA_TYPE[format]).header('vary', 'accept').send(body);
}

export async function downloadRoutes(app: FastifyTypebox): Promise<void> {
  const max = app.config.MAX_BATCH;
  for (const [kind, [path, operationId, label]] of Object.entries(PATHS) as [
    TelemetryKind,
    (typeof PATHS)['sensor'],
  ][]) {
    const field = idsField(kind);
    app.post(
      `/${path}/logs/load`,
      {
        schema: {
          tags: ['telemetry download'],
          operationId,
          summary: `Summaries of the logs of ${label}`,
          description: SUMMARY_TEXT,
          body: summaryLoadDto(kind, max),
          response: {
            200: listOrCsv(SUMMARY_DTO[kind], `summaries of the ${label}`),
            ...securedErrors(403, 404, 413),
          },
        },
      },
      async (request, reply) => {
        const body = request.body as Record<string, unknown> & Omit<SummaryBody, 'ids'>;
        const format = negotiateFormat(request.headers.accept);
        const download = await openSummaries(
          request.db,
          request.access!,
          kind,
          { ...body, ids: body[field] as number[] },
          `/${field}`,
          format,
        );
        return send(request, reply, download, format);
      },
    );
  }

  app.post(
    '/sensors/logs/raw',
    {
      schema: {
        tags: ['telemetry download'],
        operationId: 'loadSensorRawLogs',
        summary: 'Raw logs of one sensor',
        description:
          'The logs of one sensor in [start, end), ascending by time, streamed. Span at most 60 days; unknown sensor: 404; out of reach: 403.',
        body: SensorLogsRawDto,
        response: { 200: listOrCsv(SensorRawLogDto, 'the logs'), ...securedErrors(403, 404, 413) },
      },
    },
    async (request, reply) => {
      const format = negotiateFormat(request.headers.accept);
      return send(
        request,
        reply,
        await openRawSensorLogs(request.db, request.access!, request.body, format),
        format,
      );
    },
  );
}
