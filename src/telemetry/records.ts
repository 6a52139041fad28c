import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { DateTimeInput, Measured, IntId, Nullable } from '../schemas/common.js';
import { equipmentLabel } from '../equipment.js';
import { KINDS, type ColumnType, type TelemetryKind } from './kinds.js';

// The upload records (interface 2.10, contract 6) as schemas, derived from the one field table in
// kinds.ts: the upload routes take them as their bodies, and a generic upload checks each of its
// records against one once its id field has told which.

const FIELD_TYPE: Record<ColumnType, TSchema> = {
  float8: Measured,
  bool: Type.Boolean(),
  int4: Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 }),
  // NUL is refused for every body by plugins/validation.ts (PostgreSQL text cannot hold it).
  text: Type.String({ maxLength: 200 }),
  timestamptz: DateTimeInput,
};

const TITLES: Record<TelemetryKind, [log: string, reading: string]> = {
  sensor: ['SensorLogDto', 'SensorReadingDto'],
  meter: ['FlowMeterLogInboundDto', 'FlowMeterReadingDto'],
  pump: ['PumpLogDto', 'PumpReadingDto'],
  tank: ['TankLogDto', 'TankReadingDto'],
};

function recordSchema(kind: TelemetryKind, role: 'log' | 'reading'): TObject {
  const spec = KINDS[kind];
  const props: Record<string, TSchema> = {
    [spec.idField]: { ...IntId, description: `id of the ${equipmentLabel(kind)}` },
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
    description: `at most ${maxBatch} ${equipmentLabel(kind)} logs`,
  });

export const readingBatch = (kind: TelemetryKind, maxBatch: number) =>
  Type.Object(
    { readings: Type.Array(READING_DTO[kind], { maxItems: maxBatch }) },
    { title: BATCH_READINGS_TITLE[kind] },
  );
