// The four kinds of upload record (interface 2.10), each field once: its JSON name, its log column
// and its SQL type. Validation schemas, the parsing of entries and the SQL of the writer all derive
// from this table, so a field is added in one place.

export type TelemetryKind = 'sensor' | 'meter' | 'pump' | 'tank';

export type ColumnType = 'float8' | 'bool' | 'int4' | 'text' | 'timestamptz';

export interface ValueField {
  name: string;
  column: string;
  type: ColumnType;
  required: boolean;
}

export interface KindSpec {
  kind: TelemetryKind;
  /** The record's id field, which also routes generic uploads. */
  idField: 'sensorID' | 'flowMeterID' | 'sitePumpID' | 'siteTankGroupID';
  /** Log table and its id column. */
  table: string;
  idColumn: string;
  /** Fields besides the id and timestamp, in column order. */
  fields: ValueField[];
}

const f = (name: string, column: string, type: ColumnType, required = false): ValueField => ({
  name,
  column,
  type,
  required,
});

export const KINDS: Record<TelemetryKind, KindSpec> = {
  sensor: {
    kind: 'sensor',
    idField: 'sensorID',
    table: 'sensor_logs',
    idColumn: 'sensor_id',
    fields: [f('value', 'value', 'float8', true)],
  },
  meter: {
    kind: 'meter',
    idField: 'flowMeterID',
    table: 'meter_logs',
    idColumn: 'meter_id',
    fields: [
      f('startTimestamp', 'start_ts', 'timestamptz'),
      f('totalVolume', 'total_volume', 'float8'),
      f('dayVolume', 'day_volume', 'float8'),
      f('pressure', 'pressure', 'float8'),
      f('flowRate', 'flow_rate', 'float8'),
    ],
  },
  pump: {
    kind: 'pump',
    idField: 'sitePumpID',
    table: 'pump_logs',
    idColumn: 'pump_id',
    fields: [
      f('pressure', 'pressure', 'float8'),
      f('running', 'running', 'bool'),
      f('frequency', 'frequency', 'float8'),
      f('statusID', 'status_id', 'int4'),
      f('status', 'status', 'text'),
    ],
  },
  tank: {
    kind: 'tank',
    idField: 'siteTankGroupID',
    table: 'tank_logs',
    idColumn: 'tank_group_id',
    fields: [
      f('entryTankLevel', 'entry_tank_level', 'float8'),
      f('exitTankLevel', 'exit_tank_level', 'float8'),
      f('totalVolume', 'total_volume', 'float8'),
    ],
  },
};

export const KIND_LIST: KindSpec[] = Object.values(KINDS);

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
