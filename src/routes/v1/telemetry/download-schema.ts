import {
  Type,
  type TArray,
  type TInteger,
  type TProperties,
  type TSchema,
} from '@sinclair/typebox';
import { telemetryKind, type TelemetryKind, type TelemetryKindEntry } from '../../../equipment.js';
import {
  DateTimeInput,
  DateTimeOutput,
  IntId,
  Nullable,
  securedErrors,
} from '../../../schemas/common.js';

// Download DTOs (interface 4.4, contract 6). A kind's field names, DTO titles and labels come from
// the equipment registry.

const Num = Nullable(Type.Number());

const range = {
  start: {
    ...DateTimeInput,
    description: 'first instant of the range (inclusive); no offset means UTC',
  },
  end: { ...DateTimeInput, description: 'end of the range (exclusive), after start' },
};

/** The property of a download request listing 1 to `max` ids of a kind (sensorIds, meterIds…). */
export const idsProperty = <K extends TelemetryKind>(kind: K, max: number) => {
  const { idsField, label } = telemetryKind(kind);
  const ids = Type.Array(IntId, {
    minItems: 1,
    maxItems: max,
    description: `ids of the ${label}s (1 to ${max})`,
  });
  return { [idsField]: ids } as Record<TelemetryKindEntry<K>['idsField'], TArray<TInteger>>;
};

/** A request's timeZone: an IANA zone name or "site", UTC by default. */
export const timeZoneProperty = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: 'UTC', description }));

/**
 * A summary request of a kind. For a kind known only at run time (K every kind), its type lists
 * every kind's ids field though the schema asks for the kind's own only: read that one alone.
 */
export const summaryLoadDto = <K extends TelemetryKind>(kind: K, maxBatch: number) =>
  Type.Object(
    {
      ...idsProperty(kind, maxBatch),
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
      timeZone: timeZoneProperty(
        'IANA zone name whose clock the buckets follow, or "site" for each equipment\'s own site zone (UTC where it has none)',
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
    { title: `${telemetryKind(kind).nameStem}LogsLoadDto` },
  );

const bucket = {
  start: { ...DateTimeOutput, description: 'start of the bucket, cut at the request start' },
  end: { ...DateTimeOutput, description: 'end of the bucket (exclusive), cut at the request end' },
  count: Type.Integer({ description: 'samples (log rows) in the bucket' }),
};

/** A kind's summary element: its id field, the bucket, then the kind's statistics. */
const summaryDto = (
  kind: TelemetryKind,
  statistics: TProperties,
  options: { description?: string } = {},
) => {
  const { idField, nameStem } = telemetryKind(kind);
  return Type.Object(
    { [idField]: Type.Integer(), ...bucket, ...statistics },
    { title: `${nameStem}LogSummaryDto`, ...options },
  );
};

export const SUMMARY_DTO: Record<TelemetryKind, TSchema> = {
  sensor: summaryDto(
    'sensor',
    { min: Num, max: Num, avg: Num, first: Num, last: Num },
    { description: 'first and last: values of the earliest and latest samples' },
  ),
  meter: summaryDto('meter', {
    volume: {
      ...Num,
      description:
        "sum of each reading's increase of totalVolume over the meter's previous reading (which may lie before the bucket); a drop is a counter reset and adds the new total; the first reading ever adds nothing",
    },
    lastTotalVolume: { ...Num, description: "totalVolume of the bucket's latest reading" },
    avgFlowRate: Num,
    maxFlowRate: Num,
    avgPressure: Num,
  }),
  pump: summaryDto(
    'pump',
    {
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
    { description: 'lastStatusID and lastStatus: of the latest sample' },
  ),
  tank: summaryDto('tank', {
    minEntryTankLevel: Num,
    maxEntryTankLevel: Num,
    avgEntryTankLevel: Num,
    minExitTankLevel: Num,
    maxExitTankLevel: Num,
    avgExitTankLevel: Num,
    lastTotalVolume: { ...Num, description: "totalVolume of the bucket's latest sample" },
  }),
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

/** The options of a download route: its schema, answering `response` (listOrCsv) or 403, 404, 413. */
export const downloadRoute = <B extends TSchema>(route: {
  operationId: string;
  summary: string;
  description: string;
  body: B;
  response: ReturnType<typeof listOrCsv>;
}) => ({
  config: { right: 'read' as const },
  schema: {
    tags: ['telemetry download'],
    operationId: route.operationId,
    summary: route.summary,
    description: route.description,
    body: route.body,
    response: { 200: route.response, ...securedErrors(403, 404, 413) },
  },
});

const SUMMARY_TEXT =
  'Summaries over [start, end) in buckets of the interval on the clock of timeZone (days of 23 or 25 hours at ' +
  'daylight-saving changes); the first and last buckets are cut at start and end. One element per equipment and ' +
  'non-empty bucket, ordered by id then bucket; a statistic no sample of the bucket carries is null. Exact: a ' +
  'summary read after an upload was answered 201 includes it (late, replayed and replacing logs too). Span at most ' +
  '366 days. Unknown ids: 404 (checked first); any id of a site out of reach: 403. Retention (RETENTION_DAYS): the ' +
  'logs of months removed by retention are gone, but their summaries come from the rollups, which are kept, and stay ' +
  'exact wherever a bucket is made of whole quarter-hours (UTC quarters: :00, :15, :30, :45); a bucket cut by start or ' +
  'end inside a removed month counts only the whole quarter-hours inside it.';

/** The summary download of a kind (POST /<pathSegment>/logs/load), names from the registry. */
export const summaryLoadRoute = (kind: TelemetryKind, maxBatch: number) => {
  const { nameStem, label } = telemetryKind(kind);
  return downloadRoute({
    operationId: `load${nameStem}Summaries`,
    summary: `Summaries of the logs of ${label}s`,
    description: SUMMARY_TEXT,
    body: summaryLoadDto(kind, maxBatch),
    response: listOrCsv(SUMMARY_DTO[kind], `summaries of the ${label}s`),
  });
};

/** POST /sensors/logs/raw. */
export const RAW_ROUTE = downloadRoute({
  operationId: 'loadSensorRawLogs',
  summary: 'Raw logs of one sensor',
  description:
    'The logs of one sensor in [start, end), ascending by time, streamed. Span at most 60 days; unknown sensor: 404; out of reach: 403. ' +
    'Months removed by retention (RETENTION_DAYS) have no logs left: ask the summaries, which keep them.',
  body: SensorLogsRawDto,
  response: listOrCsv(SensorRawLogDto, 'the logs'),
});
