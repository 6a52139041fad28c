import { Type } from '@sinclair/typebox';
import type { TelemetryKind } from '../../../telemetry/kinds.js';
import { equipmentLabel } from '../../../equipment.js';
import { LOG_DTO, READING_DTO } from '../../../telemetry/records.js';

export { LOG_DTO, READING_DTO };

// Upload DTOs (interface 2.10, contract 6), derived from the one field table in telemetry/kinds.ts.

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
