import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { DateTimeInput, Finite, IntId, Nullable } from '../../../schemas/common.js';
import { KINDS, type ColumnType, type TelemetryKind } from '../../../telemetry/kinds.js';

// Upload DTOs (interface 2.10, contract 6), derived from the one field table in telemetry/kinds.ts.

const FIELD_TYPE: Record<ColumnType, TSchema> = {
  float8: Finite,
  bool: Type.Boolean(),
  int4: Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 }),
  // NUL is refused for every body by plugins/validation.ts (PostgreSQL text cannot hold it).
  text: Type.String({ maxLength: 200 }),
  timestamptz: DateTimeInput,
};

const TITLES: Record<TelemetryKind, [log: string, reading: string, label: string]> = {
  sensor: ['SensorLogDto', 'SensorReadingDto', 'sensor'],
  meter: ['FlowMeterLogInboundDto', 'FlowMeterReadingDto', 'flow meter'],
  pump: ['PumpLogDto', 'PumpReadingDto', 'pump'],
  tank: ['TankLogDto', 'TankReadingDto', 'tank group'],
};

function recordSchema(kind: TelemetryKind, role: 'log' | 'reading'): TObject {
  const spec = KINDS[kind];
  const props: Record<string, TSchema> = {
    [spec.idField]: { ...IntId, description: `id of the ${TITLES[kind][2]}` },
    timestamp: {
      ...DateTimeInput,
      description: 'ISO 8601; no offset means UTC; at most 24 h in the future',
    },
  };
  for (const field of spec.fields) {
    const t = FIELD_TYPE[field.type];
    props[field.name] = field.required ? t : Type.Optional(Nullable(t));
  }
  return Type.Object(props, { title: TITLES[kind][role === 'log' ? 0 : 1] });
}

export const LOG_DTO = {
  sensor: recordSchema('sensor', 'log'),
  meter: recordSchema('meter', 'log'),
  pump: recordSchema('pump', 'log'),
  tank: recordSchema('tank', 'log'),
} as const;

export const READING_DTO = {
  sensor: recordSchema('sensor', 'reading'),
  meter: recordSchema('meter', 'reading'),
  pump: recordSchema('pump', 'reading'),
  tank: recordSchema('tank', 'reading'),
} as const;

const BATCH_READINGS_TITLE: Record<TelemetryKind, string> = {
  sensor: 'BatchSensorReadingsDto',
  meter: 'BatchFlowMeterReadingsDto',
  pump: 'BatchPumpReadingsDto',
  tank: 'BatchTankReadingsDto',
};

/** A batch of logs: a bare array of at most maxBatch records. */
export const logBatch = (kind: TelemetryKind, maxBatch: number) =>
  Type.Array(LOG_DTO[kind], {
    maxItems: maxBatch,
    description: `at most ${maxBatch} ${TITLES[kind][2]} logs`,
  });

export const readingBatch = (kind: TelemetryKind, maxBatch: number) =>
  Type.Object(
    { readings: Type.Array(READING_DTO[kind], { maxItems: maxBatch }) },
    { title: BATCH_READINGS_TITLE[kind] },
  );

const GenericEntry = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'a sensor, flow meter, pump or tank group record, routed by its one id field (sensorID, flowMeterID, sitePumpID or ' +
      'siteTankGroupID) and then checked as that record; none or several id fields: 400',
  },
);

export const genericLogs = (maxBatch: number) =>
  Type.Array(GenericEntry, {
    maxItems: maxBatch,
    title: 'GenericLogsDto',
    description: `at most ${maxBatch} mixed logs`,
  });

export const genericReadings = (maxBatch: number) =>
  Type.Object(
    { readings: Type.Array(GenericEntry, { maxItems: maxBatch }) },
    { title: 'GenericReadingsDto' },
  );

export const UploadResponse = Type.Object(
  {
    received: Type.Integer({ description: 'entries in the request' }),
    stored: Type.Integer({
      description: 'entries written: new keys, or new values for a key already stored',
    }),
    duplicates: Type.Integer({
      description:
        'entries whose key and values were already stored, readings older than the current one, and entries ' +
        'superseded by a later entry of the same key in the same request (the last one wins)',
    }),
  },
  {
    title: 'UploadResponseDto',
    description: 'Committed: the counts of this request (received = stored + duplicates)',
  },
);
