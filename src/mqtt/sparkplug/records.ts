import { badTextAt } from '../../text.js';
import {
  equipmentKey,
  KINDS,
  makeEntry,
  type Entry,
  type TelemetryKind,
} from '../../telemetry/kinds.js';
import { isoTime } from '../../time.js';
import { MEASURED_MAX } from '../../schemas/common.js';
import type { Metric, MetricValue } from './codec.js';
import type { NodeBindings } from './bindings.js';

// The values of one Sparkplug message as upload entries: every bound metric becomes a field of its
// equipment's record at the metric's time (else the payload's); the metrics of one equipment with
// one time form one record. Every metric is a log; those not is_historical are also a reading.

/** Uploads are refused more than a day ahead (contract 1); so are metrics. */
const FUTURE_MS = 86_400_000;

export interface Converted {
  logs: Entry[];
  readings: Entry[];
  /** Names of metrics without a binding, and of bound metrics whose value does not fit the field. */
  unbound: string[];
  invalid: string[];
}

/** A metric's value as the field's type takes it; undefined when it does not fit. */
function fitValue(type: string, v: MetricValue): unknown {
  if (v === null) return null;
  switch (type) {
    case 'float8':
      if (typeof v === 'number') return Math.abs(v) <= MEASURED_MAX ? v : undefined;
      return typeof v === 'boolean' ? (v ? 1 : 0) : undefined;
    case 'bool':
      if (typeof v === 'boolean') return v;
      return typeof v === 'number' ? v !== 0 : undefined;
    case 'int4':
      if (typeof v === 'boolean') return v ? 1 : 0;
      return typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= 2_147_483_647
        ? v
        : undefined;
    case 'text':
      if (typeof v === 'number' || typeof v === 'boolean') return String(v);
      // PostgreSQL text cannot hold NUL; the upload records' limit is 200 characters.
      return v.length <= 200 && !badTextAt(v) ? v : undefined;
    case 'timestamptz': {
      const t = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : NaN;
      return Number.isFinite(t) && Math.abs(t) < 8.64e15 ? new Date(t).toISOString() : undefined;
    }
  }
  return undefined;
}

interface Group {
  kind: TelemetryKind;
  id: number;
  ts: number;
  values: unknown[];
  /** The equipment's group of another time in the same message (rare: most messages have one time). */
  other: Group | undefined;
}

/**
 * Groups by equipment (kind and id as one number), each with its other times chained: no key string
 * and no map per metric (a message's metrics are mostly one per equipment, all at one time).
 */
type Groups = Map<number, Group>;

function groupOf(groups: Groups, kind: TelemetryKind, id: number, ts: number): Group {
  const key = equipmentKey(kind, id);
  const first = groups.get(key);
  for (let g = first; g; g = g.other) if (g.ts === ts) return g;
  const n = KINDS[kind].fields.length;
  const values = new Array<unknown>(n);
  for (let i = 0; i < n; i++) values[i] = null;
  const g: Group = { kind, id, ts, values, other: first };
  groups.set(key, g);
  return g;
}

export function toEntries(
  bindings: NodeBindings,
  deviceId: string,
  metrics: { name: string; metric: Metric }[],
  payloadTs: number | undefined,
  now = Date.now(),
): Converted {
  const logs: Groups = new Map();
  const readings: Groups = new Map();
  const unbound: string[] = [];
  const invalid: string[] = [];
  const names = bindings.byMetric.get(deviceId);
  for (const { name, metric } of metrics) {
    if (metric.unsupported) {
      invalid.push(name);
      continue;
    }
    const b = names?.get(name);
    if (!b) {
      unbound.push(name);
      continue;
    }
    const fields = KINDS[b.kind].fields;
    const at = b.fieldIndex;
    const ts = metric.timestamp ?? payloadTs ?? now;
    const value = at < 0 ? undefined : fitValue(fields[at].type, metric.value);
    if (
      value === undefined ||
      (value === null && fields[at].required) ||
      !Number.isFinite(ts) ||
      ts < 0 ||
      ts > now + FUTURE_MS
    ) {
      invalid.push(name);
      continue;
    }
    groupOf(logs, b.kind, b.equipmentId, ts).values[at] = value;
    if (!metric.historical) groupOf(readings, b.kind, b.equipmentId, ts).values[at] = value;
  }
  const entries = (groups: Groups, reading: boolean) => {
    const out: Entry[] = [];
    for (const latest of groups.values()) {
      // Each equipment's groups in the order they were made (the chain runs newest first).
      const chain: Group[] = [];
      for (let g: Group | undefined = latest; g; g = g.other) chain.push(g);
      for (let c = chain.length - 1; c >= 0; c--) {
        const g = chain[c];
        // A sensor's record needs its value; a record of another kind needs any field.
        if (g.kind === 'sensor' ? g.values[0] === null : g.values.every((v) => v === null))
          continue;
        let record: Record<string, unknown> | undefined;
        if (reading) {
          const spec = KINDS[g.kind];
          record = { [spec.idField]: g.id };
          for (let i = 0; i < spec.fields.length; i++)
            if (g.values[i] !== null) record[spec.fields[i].name] = g.values[i];
          record.timestamp = isoTime(g.ts);
        }
        out.push(makeEntry(g.kind, g.id, g.ts, g.values, record, out.length));
      }
    }
    return out;
  };
  return { logs: entries(logs, false), readings: entries(readings, true), unbound, invalid };
}
