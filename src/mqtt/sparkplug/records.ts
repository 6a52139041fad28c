import { badTextAt } from '../../text.js';
import { KINDS, type Entry, type TelemetryKind } from '../../telemetry/kinds.js';
import type { Metric, MetricValue } from './codec.js';
import { metricKey, type NodeBindings } from './bindings.js';

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
      if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
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
}

export function toEntries(
  bindings: NodeBindings,
  deviceId: string,
  metrics: { name: string; metric: Metric }[],
  payloadTs: number | undefined,
  now = Date.now(),
): Converted {
  const logs = new Map<string, Group>();
  const readings = new Map<string, Group>();
  const unbound: string[] = [];
  const invalid: string[] = [];
  for (const { name, metric } of metrics) {
    if (metric.unsupported) {
      invalid.push(name);
      continue;
    }
    const b = bindings.byMetric.get(metricKey(deviceId, name));
    if (!b) {
      unbound.push(name);
      continue;
    }
    const spec = KINDS[b.kind];
    const at = spec.fields.findIndex((f) => f.name === b.field);
    const ts = metric.timestamp ?? payloadTs ?? now;
    const value = at < 0 ? undefined : fitValue(spec.fields[at].type, metric.value);
    if (
      value === undefined ||
      (value === null && spec.fields[at].required) ||
      !Number.isFinite(ts) ||
      ts < 0 ||
      ts > now + FUTURE_MS
    ) {
      invalid.push(name);
      continue;
    }
    const key = `${b.kind}:${b.equipmentId}:${ts}`;
    for (const groups of metric.historical ? [logs] : [logs, readings]) {
      let g = groups.get(key);
      if (!g)
        groups.set(
          key,
          (g = {
            kind: b.kind,
            id: b.equipmentId,
            ts,
            values: new Array(spec.fields.length).fill(null),
          }),
        );
      g.values[at] = value;
    }
  }
  const entries = (groups: Map<string, Group>, reading: boolean) =>
    [...groups.values()]
      // A sensor's record needs its value; a record of another kind needs any field.
      .filter(
        (g) => g.values.some((v) => v !== null) && (g.kind !== 'sensor' || g.values[0] !== null),
      )
      .map((g, index): Entry => {
        const spec = KINDS[g.kind];
        let record: Record<string, unknown> | undefined;
        if (reading) {
          record = { [spec.idField]: g.id };
          spec.fields.forEach((f, i) => {
            if (g.values[i] !== null) record![f.name] = g.values[i];
          });
          record.timestamp = new Date(g.ts).toISOString();
        }
        return { kind: g.kind, id: g.id, ts: g.ts, values: g.values, record, index };
      });
  return { logs: entries(logs, false), readings: entries(readings, true), unbound, invalid };
}
