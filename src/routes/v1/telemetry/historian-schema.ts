import { Type } from '@sinclair/typebox';
import { DateTimeInput, DateTimeOutput, IntId, Nullable } from '../../../schemas/common.js';
import { downloadRoute, idsProperty, listOrCsv, timeZoneProperty } from './download-schema.js';

// Historian DTOs (contract 13): interpolated values and plot values of sensors.

export const SensorLogsInterpolatedDto = Type.Object(
  {
    ...idsProperty('sensor', 100),
    start: Type.Optional({
      ...DateTimeInput,
      description: 'first instant of the grid range (inclusive); with interval, omitted with times',
    }),
    end: Type.Optional({
      ...DateTimeInput,
      description: 'last instant of the grid range (inclusive), after start; span at most 366 days',
    }),
    interval: Type.Optional(
      Type.Union(
        [
          Type.Literal('1m'),
          Type.Literal('5m'),
          Type.Literal('15m'),
          Type.Literal('1h'),
          Type.Literal('1d'),
        ],
        {
          description:
            'grid step on the clock of timeZone: whole minutes, five minutes, quarters, hours or local midnights; every grid instant t with start <= t <= end. Not with times',
        },
      ),
    ),
    timeZone: timeZoneProperty(
      'IANA zone whose clock the grid follows, or "site" for each sensor\'s own site zone',
    ),
    times: Type.Optional(
      Type.Array(DateTimeInput, {
        minItems: 1,
        maxItems: 10_000,
        description:
          'instants (1 to 10,000, any order) instead of a grid; start and end are then omitted',
      }),
    ),
  },
  {
    title: 'SensorLogsInterpolatedDto',
    description:
      'either interval (with start and end) or times, not both; at most 100,000 values in all',
  },
);

export const SensorInterpolatedValueDto = Type.Object(
  {
    sensorID: Type.Integer(),
    timestamp: DateTimeOutput,
    value: {
      ...Nullable(Type.Number()),
      description:
        "v(t) of the sensor's mode: stepped (the latest sample at or before t) or continuous (the straight line between the samples around t); null before the first or after the latest sample",
    },
  },
  { title: 'SensorInterpolatedValueDto' },
);

export const SensorLogsPlotDto = Type.Object(
  {
    sensorId: IntId,
    start: { ...DateTimeInput, description: 'first instant of the range (inclusive)' },
    end: {
      ...DateTimeInput,
      description: 'end of the range (exclusive), after start; span at most 366 days',
    },
    intervals: Type.Integer({
      minimum: 1,
      maximum: 2000,
      description:
        'number of equal parts of [start, end) (whole milliseconds, the last part takes the remainder)',
    }),
  },
  { title: 'SensorLogsPlotDto' },
);

export const SensorPlotValueDto = Type.Object(
  { sensorID: Type.Integer(), timestamp: DateTimeOutput, value: Type.Number() },
  { title: 'SensorPlotValueDto', description: 'a stored sample' },
);

const ACCESS =
  'Unknown sensors: 404 (checked first); any sensor of a site out of reach: 403. JSON, or CSV when the Accept header prefers it.';

/** POST /sensors/logs/interpolated. */
export const INTERPOLATED_ROUTE = downloadRoute({
  operationId: 'loadSensorInterpolatedValues',
  summary: 'Interpolated values of sensors',
  description:
    "The value of each sensor at each instant of a grid on a zone's clock (interval, start and end, end included) or at " +
    'the given times: stepped sensors (Step: true in the provisioning document) hold each sample until the next, ' +
    'continuous ones follow the straight line between the samples around t. Null before the first and after the ' +
    'latest sample. Ordered by sensor id, then time (for times, in the order given). At most 100,000 values; span at ' +
    `most 366 days. ${ACCESS}`,
  body: SensorLogsInterpolatedDto,
  response: listOrCsv(SensorInterpolatedValueDto, 'the values'),
});

/** POST /sensors/logs/plot. */
export const PLOT_ROUTE = downloadRoute({
  operationId: 'loadSensorPlotValues',
  summary: 'Plot values of one sensor',
  description:
    '[start, end) cut into intervals equal parts; for each part that holds samples, its first, last, lowest and highest ' +
    'sample (the earliest of equal values), each sample once, ascending by time: stored samples only, never averages, ' +
    `so peaks survive any zoom. At most 4 x intervals elements; span at most 366 days. ${ACCESS}`,
  body: SensorLogsPlotDto,
  response: listOrCsv(SensorPlotValueDto, 'the samples'),
});
