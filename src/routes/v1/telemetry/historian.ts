import type { FastifyTypebox } from '../../../http.js';
import { securedErrors } from '../../../schemas/common.js';
import { openInterpolated } from '../../../telemetry/download/interpolated.js';
import { openPlot } from '../../../telemetry/download/plot.js';
import { negotiate, sendRecords } from '../records.js';
import { listOrCsv } from './download-schema.js';
import {
  SensorInterpolatedValueDto,
  SensorLogsInterpolatedDto,
  SensorLogsPlotDto,
  SensorPlotValueDto,
} from './historian-schema.js';

// Contract 13: interpolated values and plot values of sensors.

const ACCESS =
  'Unknown sensors: 404 (checked first); any sensor of a site out of reach: 403. JSON, or CSV when the Accept header prefers it.';

export async function historianRoutes(app: FastifyTypebox): Promise<void> {
  app.post(
    '/sensors/logs/interpolated',
    {
      schema: {
        tags: ['telemetry download'],
        operationId: 'loadSensorInterpolatedValues',
        summary: 'Interpolated values of sensors',
        description:
          "The value of each sensor at each instant of a grid on a zone's clock (interval, start and end, end included) or at " +
          'the given times: stepped sensors (Step: true in the provisioning document) hold each sample until the next, ' +
          'continuous ones follow the straight line between the samples around t. Null before the first and after the ' +
          'latest sample. Ordered by sensor id, then time (for times, in the order given). At most 100,000 values; span at ' +
          `most 366 days. ${ACCESS}`,
        body: SensorLogsInterpolatedDto,
        response: {
          200: listOrCsv(SensorInterpolatedValueDto, 'the values'),
          ...securedErrors(403, 404, 413),
        },
      },
    },
    async (request, reply) => {
      const answer = negotiate(request);
      const { fields, pages } = await openInterpolated(request.db, request.access!, request.body);
      return sendRecords(reply, answer, fields, pages);
    },
  );

  app.post(
    '/sensors/logs/plot',
    {
      schema: {
        tags: ['telemetry download'],
        operationId: 'loadSensorPlotValues',
        summary: 'Plot values of one sensor',
        description:
          '[start, end) cut into intervals equal parts; for each part that holds samples, its first, last, lowest and highest ' +
          'sample (the earliest of equal values), each sample once, ascending by time: stored samples only, never averages, ' +
          `so peaks survive any zoom. At most 4 x intervals elements; span at most 366 days. ${ACCESS}`,
        body: SensorLogsPlotDto,
        response: {
          200: listOrCsv(SensorPlotValueDto, 'the samples'),
          ...securedErrors(403, 404, 413),
        },
      },
    },
    async (request, reply) => {
      const answer = negotiate(request);
      const { fields, pages } = await openPlot(request.db, request.access!, request.body);
      return sendRecords(reply, answer, fields, pages);
    },
  );
}
