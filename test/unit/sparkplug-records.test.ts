import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Binding, NodeBindings } from '../../src/mqtt/sparkplug/bindings.js';
import type { Metric } from '../../src/mqtt/sparkplug/codec.js';
import { toEntries } from '../../src/mqtt/sparkplug/records.js';
import { KINDS, type TelemetryKind } from '../../src/telemetry/kinds.js';

// The values of a Sparkplug message as upload entries, against a direct computation: every bound,
// fitting metric sets one field of the record of its equipment at its time; each record is a log,
// and a reading unless all of its metrics are historical.

const NOW = Date.UTC(2026, 10, 26, 12);
const TIMES = [NOW - 60_000, NOW - 1000, NOW];

/** Bindings of device 'd1': a sensor, a pump's pressure and running, a tank's two levels, a bad field. */
const BOUND: Omit<Binding, 'fieldIndex' | 'deviceId' | 'siteId'>[] = [
  { metricName: 's1', kind: 'sensor', equipmentId: 101, field: 'value' },
  { metricName: 's2', kind: 'sensor', equipmentId: 102, field: 'value' },
  { metricName: 'p/pressure', kind: 'pump', equipmentId: 201, field: 'pressure' },
  { metricName: 'p/running', kind: 'pump', equipmentId: 201, field: 'running' },
  { metricName: 't/entry', kind: 'tank', equipmentId: 301, field: 'entryTankLevel' },
  { metricName: 't/exit', kind: 'tank', equipmentId: 301, field: 'exitTankLevel' },
  { metricName: 'bad', kind: 'sensor', equipmentId: 103, field: 'nonsense' },
];

function bindings(): NodeBindings {
  const names = new Map<string, Binding>();
  for (const b of BOUND)
    names.set(b.metricName, {
      ...b,
      deviceId: 'd1',
      siteId: 1,
      fieldIndex: KINDS[b.kind].fields.findIndex((f) => f.name === b.field),
    });
  return { byMetric: new Map([['d1', names]]), sites: [1], sitesOf: () => [1] };
}

const metricArb = fc.record({
  name: fc.constantFrom(...BOUND.map((b) => b.metricName), 'unbound'),
  timestamp: fc.option(fc.constantFrom(...TIMES), { nil: undefined }),
  historical: fc.boolean(),
  value: fc.oneof(fc.double({ noNaN: true, min: -1e6, max: 1e6 }), fc.boolean(), fc.constant(null)),
});

interface Expected {
  kind: TelemetryKind;
  id: number;
  ts: number;
  values: unknown[];
}

/** The direct computation: one record per (equipment, time), the last value of each field winning. */
function expected(metrics: Metric[], payloadTs: number, historicalToo: boolean) {
  const records = new Map<string, Expected>();
  const byName = new Map(BOUND.map((b) => [b.metricName, b]));
  for (const m of metrics) {
    const b = byName.get(m.name!);
    if (!b || (!historicalToo && m.historical)) continue;
    const fields = KINDS[b.kind].fields;
    const at = fields.findIndex((f) => f.name === b.field);
    if (at < 0) continue;
    const type = fields[at].type;
    let v: unknown = m.value;
    if (type === 'float8' && typeof v === 'boolean') v = v ? 1 : 0;
    if (type === 'bool' && typeof v === 'number') v = v !== 0;
    if (v === null && fields[at].required) continue;
    const ts = m.timestamp ?? payloadTs;
    const key = `${b.kind}/${b.equipmentId}/${ts}`;
    const r = records.get(key) ?? {
      kind: b.kind,
      id: b.equipmentId,
      ts,
      values: fields.map(() => null),
    };
    r.values[at] = v;
    records.set(key, r);
  }
  return [...records.values()]
    .filter((r) => (r.kind === 'sensor' ? r.values[0] !== null : r.values.some((v) => v !== null)))
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.id - b.id || a.ts - b.ts);
}

const sorted = <T extends Expected>(xs: T[]) =>
  xs
    .map(({ kind, id, ts, values }) => ({ kind, id, ts, values }))
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.id - b.id || a.ts - b.ts);

describe('Sparkplug metrics as upload entries', () => {
  it('makes one record per equipment and time, logs of every metric and readings of the live ones', () => {
    fc.assert(
      fc.property(fc.array(metricArb, { maxLength: 40 }), (metrics) => {
        const payloadTs = NOW - 5000;
        const out = toEntries(
          bindings(),
          'd1',
          metrics.map((metric) => ({ name: metric.name, metric })),
          payloadTs,
          NOW,
        );
        expect(sorted(out.logs)).toEqual(expected(metrics, payloadTs, true));
        expect(sorted(out.readings)).toEqual(expected(metrics, payloadTs, false));
        // Indexes number the entries of each list in order; a reading's record holds its fields.
        expect(out.logs.map((e) => e.index)).toEqual(out.logs.map((_, i) => i));
        expect(out.readings.map((e) => e.index)).toEqual(out.readings.map((_, i) => i));
        for (const e of out.readings) {
          const spec = KINDS[e.kind];
          const record: Record<string, unknown> = { [spec.idField]: e.id };
          spec.fields.forEach((f, i) => {
            if (e.values[i] !== null) record[f.name] = e.values[i];
          });
          record.timestamp = new Date(e.ts).toISOString();
          expect(e.record).toEqual(record);
        }
        expect(out.unbound.filter((n) => n !== 'unbound')).toEqual([]);
        expect(out.unbound.length).toBe(metrics.filter((m) => m.name === 'unbound').length);
        // An unknown field, and a sensor's value left null (a sensor's record needs one), are invalid.
        expect(out.invalid.length).toBe(
          metrics.filter((m) => m.name === 'bad' || (m.name[0] === 's' && m.value === null)).length,
        );
      }),
      { numRuns: 300 },
    );
  });

  it('drops a value beyond 1e15 in absolute value as not fitting its field, and takes 1e15', () => {
    const metrics: Metric[] = [
      { name: 's1', value: 1e308 },
      { name: 'p/pressure', value: -2e15 },
      { name: 's2', value: -1e15 },
    ];
    const out = toEntries(
      bindings(),
      'd1',
      metrics.map((metric) => ({ name: metric.name!, metric })),
      NOW,
      NOW,
    );
    expect(out.invalid.sort()).toEqual(['p/pressure', 's1']);
    expect(out.logs.map((e) => [e.kind, e.id, e.values])).toEqual([['sensor', 102, [-1e15]]]);
  });
});
