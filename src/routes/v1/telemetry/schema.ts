import { Type } from '@sinclair/typebox';
import { ID_FIELDS, KIND_LABELS, phrase } from '../../../telemetry/kinds.js';
import { LOG_DTO, logBatch, READING_DTO, readingBatch } from '../../../telemetry/records.js';

export { LOG_DTO, logBatch, READING_DTO, readingBatch };

// Upload DTOs (interface 2.10, contract 6), derived from the one field table in telemetry/kinds.ts.

const GenericEntry = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      `a ${phrase(KIND_LABELS, 'or')} record, routed by its one id field (${phrase(ID_FIELDS, 'or')}) ` +
      'and then checked as that record; none or several id fields: 400',
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
