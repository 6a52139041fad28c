import type { FastifyTypebox } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import type { TelemetryKind } from '../../../telemetry/kinds.js';
import { openSummaries, type SummaryBody } from '../../../telemetry/download/index.js';
import { openRawSensorLogs } from '../../../telemetry/download/raw.js';
import { negotiate, sendRecords } from '../records.js';
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
  '366 days. Unknown ids: 404 (checked first); any id of a site out of reach: 403. Retention (RETENTION_DAYS): the ' +
  'logs of months removed by retention are gone, but their summaries come from the rollups, which are kept, and stay ' +
  'exact wherever a bucket is made of whole quarter-hours (UTC quarters: :00, :15, :30, :45); a bucket cut by start or ' +
  'end inside a removed month counts only the whole quarter-hours inside it.';

export async function downloadRoutes(app: FastifyTypebox): Promise<void> {
  const max = app.settings.MAX_BATCH;
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
        const answer = negotiate(request);
        const { fields, pages } = await openSummaries(
          request.db,
          request.access!,
          kind,
          { ...body, ids: body[field] as number[] },
          `/${field}`,
          answer.format,
        );
        return sendRecords(reply, answer, fields, pages);
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
          'The logs of one sensor in [start, end), ascending by time, streamed. Span at most 60 days; unknown sensor: 404; out of reach: 403. ' +
          'Months removed by retention (RETENTION_DAYS) have no logs left: ask the summaries, which keep them.',
        body: SensorLogsRawDto,
        response: { 200: listOrCsv(SensorRawLogDto, 'the logs'), ...securedErrors(403, 404, 413) },
      },
    },
    async (request, reply) => {
      const answer = negotiate(request);
      const { fields, pages } = await openRawSensorLogs(
        request.db,
        request.access!,
        request.body,
        answer.format,
      );
      return sendRecords(reply, answer, fields, pages);
    },
  );
}
