import protobuf from 'protobufjs';
import { SPARKPLUG_B_PROTO } from './schema.js';

// Sparkplug B payloads to and from plain values. Only what the host reads (and the simulator and
// NCMD write) is mapped: scalar metrics; datasets, templates and bytes decode to `unsupported`.

/** Sparkplug 3.0 data types (the numbers of its DataType enumeration) the host maps to values. */
export const DataType = {
  Int8: 1,
  Int16: 2,
  Int32: 3,
  Int64: 4,
  UInt8: 5,
  UInt16: 6,
  UInt32: 7,
  UInt64: 8,
  Float: 9,
  Double: 10,
  Boolean: 11,
  String: 12,
  DateTime: 13,
  Text: 14,
} as const;

export type MetricValue = number | boolean | string | null;

export interface Metric {
  name?: string;
  alias?: number;
  /** Epoch ms. */
  timestamp?: number;
  datatype?: number;
  historical?: boolean;
  /** A value the host cannot map (dataset, template, bytes…): the metric is ignored. */
  unsupported?: boolean;
  /** null: is_null, or no value at all. */
  value: MetricValue;
}

export interface Payload {
  timestamp?: number;
  seq?: number;
  metrics: Metric[];
}

const root = protobuf.parse(SPARKPLUG_B_PROTO, { keepCase: true }).root;
const PayloadType = root.lookupType('org.eclipse.tahu.protobuf.Payload');

const LongType = protobuf.util.Long as unknown as {
  fromNumber(n: number): { toUnsigned(): unknown };
};
type Long = { toNumber(): number; toSigned(): Long; low: number; high: number };
type Raw = Record<string, unknown>;

const isLong = (v: unknown): v is Long =>
  typeof v === 'object' && v !== null && typeof (v as Long).toNumber === 'function';
const num = (v: unknown): number | undefined =>
  v === undefined || v === null ? undefined : isLong(v) ? v.toNumber() : Number(v);
const has = (o: Raw, key: string) => Object.prototype.hasOwnProperty.call(o, key);

/** A signed integer of `bits` sent as its two's complement in an unsigned field. */
function signed(v: number, bits: 8 | 16 | 32): number {
  if (bits === 32) return v | 0;
  const top = 2 ** bits;
  const low = v % top;
  return low >= top / 2 ? low - top : low;
}

function valueOf(m: Raw): { value: MetricValue; unsupported?: boolean } {
  if (m.is_null === true) return { value: null };
  const field = m.value as string | undefined;
  if (!field) return { value: null };
  const v = m[field];
  const type = m.datatype as number | undefined;
  switch (field) {
    case 'int_value': {
      const n = v as number;
      if (type === DataType.Int8) return { value: signed(n, 8) };
      if (type === DataType.Int16) return { value: signed(n, 16) };
      if (type === DataType.Int32) return { value: signed(n, 32) };
      return { value: n };
    }
    case 'long_value':
      return {
        value: isLong(v) && type === DataType.Int64 ? v.toSigned().toNumber() : num(v)!,
      };
    case 'float_value':
    case 'double_value':
    case 'boolean_value':
    case 'string_value':
      return { value: v as MetricValue };
    default:
      return { value: null, unsupported: true };
  }
}

/** Decodes a Sparkplug B payload; throws on bytes that are not one. */
export function decodePayload(bytes: Uint8Array): Payload {
  const msg = PayloadType.decode(bytes) as unknown as Raw;
  const metrics = ((msg.metrics as Raw[] | undefined) ?? []).map((m): Metric => {
    const { value, unsupported } = valueOf(m);
    return {
      name: has(m, 'name') ? (m.name as string) : undefined,
      alias: has(m, 'alias') ? num(m.alias) : undefined,
      timestamp: has(m, 'timestamp') ? num(m.timestamp) : undefined,
      datatype: has(m, 'datatype') ? (m.datatype as number) : undefined,
      historical: m.is_historical === true,
      unsupported,
      value,
    };
  });
  return {
    timestamp: has(msg, 'timestamp') ? num(msg.timestamp) : undefined,
    seq: has(msg, 'seq') ? num(msg.seq) : undefined,
    metrics,
  };
}

/** The protobuf field a value of `datatype` travels in. */
function fieldOf(datatype: number | undefined, value: MetricValue): string {
  switch (datatype) {
    case DataType.Int8:
    case DataType.Int16:
    case DataType.Int32:
    case DataType.UInt8:
    case DataType.UInt16:
    case DataType.UInt32:
      return 'int_value';
    case DataType.Int64:
    case DataType.UInt64:
    case DataType.DateTime:
      return 'long_value';
    case DataType.Float:
      return 'float_value';
    case DataType.Double:
      return 'double_value';
    case DataType.Boolean:
      return 'boolean_value';
    case DataType.String:
    case DataType.Text:
      return 'string_value';
  }
  return typeof value === 'boolean'
    ? 'boolean_value'
    : typeof value === 'string'
      ? 'string_value'
      : 'double_value';
}

/** Encodes a payload (the simulator's, an NCMD). */
export function encodePayload(p: Payload): Uint8Array {
  const raw: Raw = { metrics: p.metrics.map(toRaw) };
  if (p.timestamp !== undefined) raw.timestamp = p.timestamp;
  if (p.seq !== undefined) raw.seq = p.seq;
  return PayloadType.encode(PayloadType.fromObject(raw)).finish();
}

function toRaw(m: Metric): Raw {
  // Every key present from the start (undefined ones are not encoded): objects of one shape, several
  // times faster to make and read than ones that grow key by key.
  const raw: Raw = {
    name: m.name,
    alias: m.alias,
    timestamp: m.timestamp,
    datatype: m.datatype,
    is_historical: m.historical ? true : undefined,
    is_null: m.value === null ? true : undefined,
    int_value: undefined,
    long_value: undefined,
    float_value: undefined,
    double_value: undefined,
    boolean_value: undefined,
    string_value: undefined,
  };
  if (m.value !== null) {
    const field = fieldOf(m.datatype, m.value);
    // Signed integers travel as their two's complement in the unsigned field.
    raw[field] =
      field === 'int_value' && typeof m.value === 'number'
        ? m.value >>> 0
        : field === 'long_value' && typeof m.value === 'number' && m.value < 0
          ? LongType.fromNumber(m.value).toUnsigned()
          : (m.value as unknown);
  }
  return raw;
}
