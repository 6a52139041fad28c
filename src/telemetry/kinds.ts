// The four kinds of upload record (interface 2.10), each field once: its JSON name, its log column
// and its SQL type. Validation schemas, the parsing of entries and the SQL of the writer all derive
// from this table, so a field is added in one place.

import {
  EQUIPMENT,
  equipmentLabel,
  TELEMETRY_KINDS,
  type TelemetryKind,
  type TelemetryKindInfo,
} from '../equipment.js';

export type { TelemetryKind };

export type ColumnType = 'float8' | 'bool' | 'int4' | 'text' | 'timestamptz';

export interface ValueField {
  name: string;
  column: string;
  type: ColumnType;
  required: boolean;
}

export interface KindSpec {
  kind: TelemetryKind;
  /** The record's id field, which also routes generic uploads (the equipment registry's). */
  idField: TelemetryKindInfo['idField'];
  /** Log table and its id column (named as in the equipment's own table). */
  table: string;
  idColumn: string;
  /** Fields besides the id and timestamp, in column order. */
  fields: ValueField[];
}

/** Builds a field list from `name:column:type` specs; a trailing `!` marks a required field. */
const fields = (...specs: string[]): ValueField[] =>
  specs.map((spec) => {
    const required = spec.endsWith('!');
    const [name, column, type] = (required ? spec.slice(0, -1) : spec).split(':');
    return { name, column, type: type as ColumnType, required };
  });

/** Each kind's value fields; the id field and id column come from the equipment registry. */
const FIELDS: Record<TelemetryKind, ValueField[]> = {
  sensor: fields('value:value:float8!'),
  meter: fields(
    'startTimestamp:start_ts:timestamptz',
    'totalVolume:total_volume:float8',
    'dayVolume:day_volume:float8',
    'pressure:pressure:float8',
    'flowRate:flow_rate:float8',
  ),
  pump: fields(
    'pressure:pressure:float8',
    'running:running:bool',
    'frequency:frequency:float8',
    'statusID:status_id:int4',
    'status:status:text',
  ),
  tank: fields(
    'entryTankLevel:entry_tank_level:float8',
    'exitTankLevel:exit_tank_level:float8',
    'totalVolume:total_volume:float8',
  ),
};

export const KINDS = Object.fromEntries(
  TELEMETRY_KINDS.map((kind) => [
    kind,
    {
      kind,
      idField: EQUIPMENT[kind].idField,
      table: `${kind}_logs`,
      idColumn: EQUIPMENT[kind].idColumn,
      fields: FIELDS[kind],
    },
  ]),
) as Record<TelemetryKind, KindSpec>;

export const KIND_LIST: KindSpec[] = Object.values(KINDS);

/** The id fields that route a generic upload: one per kind, in the registry's order. */
export const ID_FIELDS = KIND_LIST.map((k) => k.idField);

/** The kinds as messages name them ("sensor", "flow meter", …), in the registry's order. */
export const KIND_LABELS = KIND_LIST.map((k) => equipmentLabel(k.kind));

/** Words as a phrase for messages: "a, b, c or d". */
export const phrase = (words: readonly string[], conjunction: 'and' | 'or') =>
  words.length > 1
    ? `${words.slice(0, -1).join(', ')} ${conjunction} ${words[words.length - 1]}`
    : words.join('');

/** One validated upload entry, ready to write. */
export interface Entry {
  kind: TelemetryKind;
  id: number;
  /** Epoch milliseconds. */
  ts: number;
  /** Values in the order of KINDS[kind].fields; null when absent. Times as ISO strings. */
  values: unknown[];
  /** Readings only: the record as stored in current_readings (known fields as sent, times in UTC). */
  record?: Record<string, unknown>;
  /** Index of the entry in its request, for error details. */
  index: number;
  /** The equipment's site, once the access check has found it. */
  site?: number;
}

/** One number per (kind, id), for maps without key strings: ids are 32-bit, so code * 2^32 + id is exact. */
export const equipmentKey = (kind: TelemetryKind, id: number) =>
  EQUIPMENT[kind].code * 4_294_967_296 + id;

/**
 * An entry, always of one shape: every field present from the start (`site` too), so the access
 * check's setting `site` changes no object's layout, and the code that reads entries in the hot
 * paths (directory, jobs, statement, stream events) sees one shape. Entries copied with spread or
 * given `site` later were several times slower to read (1,000,000 of them: about 1.7 s against
 * 0.1 s to set `site`, timed in a script).
 */
export function makeEntry(
  kind: TelemetryKind,
  id: number,
  ts: number,
  values: unknown[],
  record: Record<string, unknown> | undefined,
  index: number,
): Entry {
  return { kind, id, ts, values, record, index, site: undefined };
}
