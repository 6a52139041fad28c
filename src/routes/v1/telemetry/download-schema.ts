import { Type, type TSchema } from '@sinclair/typebox';
import { DateTimeInput, DateTimeOutput, IntId, Nullable } from '../../../schemas/common.js';
import type { TelemetryKind } from '../../../telemetry/kinds.js';

// Download DTOs (interface 4.4, contract 6).

const Num = Nullable(Type.Number());

const range = {
  start: {
    ...DateTimeInput,
    description: 'first instant of the range (inclusive); no offset means UTC',
  },
  end: { ...DateTimeInput, description: 'end of the range (exclusive), after start' },
};

const IDS: Record<TelemetryKind, [field: string, title: string, label: string]> = {
  sensor: ['sensorIds', 'SensorLogsLoadDto', 'sensors'],
  meter: ['meterIds', 'MeterLogsLoadDto', 'flow meters'],
  pump: ['pumpIds', 'PumpLogsLoadDto', 'pumps'],
  tank: ['tankGroupIds', 'TankLogsLoadDto', 'tank groups'],
};

export const idsField = (kind: TelemetryKind) => IDS[kind][0];

export const summaryLoadDto = (kind: TelemetryKind, maxBatch: number) =>
  Type.Object(
    {
      [IDS[kind][0]]: Type.Array(IntId, {
        minItems: 1,
        maxItems: maxBatch,
        description: `ids of the ${IDS[kind][2]} (1 to ${maxBatch})`,
      }),
      ...range,
      interval: Type.Optional(
        Type.Union(
          [Type.Literal('15m'), Type.Literal('1h'), Type.Literal('1d'), Type.Literal('all')],
          {
            default: '1h',
            description:
              'bucket width: 15m and 1h start on whole quarters and hours of the zone clock, 1d at its midnight; all: one bucket [start, end)',
          },
        ),
      ),
      timeZone: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 64,
          default: 'UTC',
          description:
            'IANA zone name whose clock the buckets follow, or "site" for each equipment\'s own site zone (UTC where it has none)',
        }),
      ),
      calculationBasis: Type.Optional(
        Type.Union([Type.Literal('eventWeighted'), Type.Literal('timeWeighted')], {
          default: 'eventWeighted',
          description:
            'eventWeighted: averages are means of the samples. timeWeighted (contract 13): averages (and pump runningPercent) are ' +
            'means over time of the value function (stepped or continuous) over the part of each bucket between the first and ' +
            'latest samples of that field; buckets between samples get elements with count 0; values at bucket edges come ' +
            'from the samples around them, even outside [start, end)',
        }),
      ),
    },
    { title: IDS[kind][1] },
  );

const bucket = {
  start: { ...DateTimeOutput, description: 'start of the bucket, cut at the request start' },
  end: { ...DateTimeOutput, description: 'end of the bucket (exclusive), cut at the request end' },
  count: Type.Integer({ description: 'samples (log rows) in the bucket' }),
};

export const SUMMARY_DTO: Record<TelemetryKind, TSchema> = {
  sensor: Type.Object(
    { sensorID: Type.Integer(), ...bucket, min: Num, max: Num, avg: Num, first: Num, last: Num },
    {
      title: 'SensorLogSummaryDto',
      description: 'first and last: values of the earliest and latest samples',
    },
  ),
  meter: Type.Object(
    {
      flowMeterID: Type.Integer(),
      ...bucket,
      volume: {
        ...Num,
        description:
          "sum of each reading's increase of totalVolume over the meter's previous reading (which may lie before the bucket); a drop is a counter reset and adds the new total; the first reading ever adds nothing",
      },
      lastTotalVolume: { ...Num, description: "totalVolume of the bucket's latest reading" },
      avgFlowRate: Num,
      maxFlowRate: Num,
      avgPressure: Num,
    },
    { title: 'MeterLogSummaryDto' },
  ),
  pump: Type.Object(
    {
      sitePumpID: Type.Integer(),
      ...bucket,
      runningPercent: {
        ...Num,
        description: 'share of the samples that carry running with running: true, 0 to 100',
      },
      avgFrequency: Num,
      avgPressure: Num,
      maxPressure: Num,
      lastStatusID: Nullable(Type.Integer()),
      lastStatus: Nullable(Type.String()),
    },
    {
      title: 'PumpLogSummaryDto',
      description: 'lastStatusID and lastStatus: of the latest sample',
    },
  ),
  tank: Type.Object(
    {
      siteTankGroupID: Type.Integer(),
      ...bucket,
      minEntryTankLevel: Num,
      maxEntryTankLevel: Num,
      avgEntryTankLevel: Num,
      minExitTankLevel: Num,
      maxExitTankLevel: Num,
      avgExitTankLevel: Num,
      lastTotalVolume: { ...Num, description: "totalVolume of the bucket's latest sample" },
    },
    { title: 'TankLogSummaryDto' },
  ),
};

export const SensorLogsRawDto = Type.Object(
  { sensorId: IntId, ...range },
  { title: 'SensorLogsRawDto', description: 'one sensor; [start, end) at most 60 days' },
);

export const SensorRawLogDto = Type.Object(
  { sensorID: Type.Integer(), value: Type.Number(), timestamp: DateTimeOutput },
  { title: 'SensorRawLogDto' },
);

/** A 200 that is JSON (an array of the element) or CSV, by the request's Accept header. */
export const listOrCsv = (element: TSchema, what: string) => ({
  description: `${what}: JSON, or CSV when the Accept header prefers text/csv (a header line of the field names, then one line per element; null as an empty field)`,
  content: {
    'application/json': { schema: Type.Array(element) },
    'text/csv': { schema: Type.String() },
  },
});
