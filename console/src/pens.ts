import type { Kind } from './api-schema.js';

// (Types only from the API's schema: the service's unit tests import this module.)

// Multi-pen trends: up to 8 series, each one field of one piece of equipment of any site, with its
// own basis (sample average, time-weighted average, or a sensor's raw plot values). The page's
// address lists them as `pens=site.kind.id.field.basis,…` so a reload or a shared link draws the same.

export const MAX_PENS = 8;
export type Basis = 'sample' | 'time' | 'raw';
export interface Pen {
  site: number;
  kind: Kind;
  id: number;
  field: string;
  basis: Basis;
}

/** What a field's unit is read from: the equipment's configuration. */
interface Units {
  units?: string;
  flowUnits?: string;
  levelUnits?: string;
}

interface Field {
  label: string;
  /** The field's unit for a piece of equipment; undefined: none in the configuration (an axis of its own). */
  unit: (e: Units) => string | undefined;
  /** A time-weighted value exists (the avg… fields and pump running %). */
  timeWeighted: boolean;
}
const none = () => undefined;
/** A tank group's level units: its level registers', feet where they have none (as model.ts levelUnits). */
const level = (e: Units) => e.levelUnits || 'ft';
/** The fields a pen may draw, per kind, in the summary routes' names. */
export const FIELDS: Record<Kind, Record<string, Field>> = {
  sensor: {
    avg: { label: 'Average', unit: (e) => e.units, timeWeighted: true },
    min: { label: 'Min', unit: (e) => e.units, timeWeighted: false },
    max: { label: 'Max', unit: (e) => e.units, timeWeighted: false },
  },
  meter: {
    volume: { label: 'Volume', unit: (e) => e.units, timeWeighted: false },
    avgFlowRate: { label: 'Average flow rate', unit: (e) => e.flowUnits, timeWeighted: true },
    maxFlowRate: { label: 'Max flow rate', unit: (e) => e.flowUnits, timeWeighted: false },
    avgPressure: { label: 'Average pressure', unit: none, timeWeighted: true },
  },
  pump: {
    runningPercent: { label: 'Running %', unit: () => '%', timeWeighted: true },
    avgFrequency: { label: 'Average frequency', unit: () => 'Hz', timeWeighted: true },
    avgPressure: { label: 'Average pressure', unit: none, timeWeighted: true },
    maxPressure: { label: 'Max pressure', unit: none, timeWeighted: false },
  },
  tank: {
    avgEntryTankLevel: { label: 'Average entry level', unit: level, timeWeighted: true },
    minEntryTankLevel: { label: 'Min entry level', unit: level, timeWeighted: false },
    maxEntryTankLevel: { label: 'Max entry level', unit: level, timeWeighted: false },
    avgExitTankLevel: { label: 'Average exit level', unit: level, timeWeighted: true },
    minExitTankLevel: { label: 'Min exit level', unit: level, timeWeighted: false },
    maxExitTankLevel: { label: 'Max exit level', unit: level, timeWeighted: false },
  },
};
/** A sensor's raw values: the plot route's `value`. */
const RAW: Field = { label: 'Raw value', unit: (e) => e.units, timeWeighted: false };

export const fieldOf = (p: Pen): Field | undefined =>
  p.basis === 'raw' ? RAW : FIELDS[p.kind]?.[p.field];

/** The bases a field offers. */
export function basesOf(kind: Kind, field: string, rawAllowed: boolean): Basis[] {
  const f = FIELDS[kind][field];
  return [
    'sample',
    ...(f?.timeWeighted ? (['time'] as const) : []),
    ...(kind === 'sensor' && rawAllowed ? (['raw'] as const) : []),
  ];
}

const BASIS_CODE: Record<Basis, string> = { sample: 's', time: 't', raw: 'r' };
const KINDS: Kind[] = ['sensor', 'meter', 'pump', 'tank'];

export const penKey = (p: Pen) =>
  `${p.site}.${p.kind}.${p.id}.${p.basis === 'raw' ? 'value' : p.field}.${BASIS_CODE[p.basis]}`;

/** The pens an address lists (unknown or repeated ones dropped, at most 8). */
export function readPens(value: string | null): Pen[] {
  const pens: Pen[] = [];
  for (const part of (value ?? '').split(',')) {
    const [site, kind, id, field, code] = part.split('.');
    const basis = (Object.keys(BASIS_CODE) as Basis[]).find((b) => BASIS_CODE[b] === code);
    const pen = { site: Number(site), kind: kind as Kind, id: Number(id), field, basis: basis! };
    if (!(pen.site > 0 && pen.id > 0 && KINDS.includes(pen.kind) && basis)) continue;
    if (basis === 'raw' ? kind !== 'sensor' : !FIELDS[pen.kind][field]) continue;
    if (basis === 'time' && !FIELDS[pen.kind][field].timeWeighted) continue;
    if (pens.some((p) => penKey(p) === penKey(pen)) || pens.length >= MAX_PENS) continue;
    pens.push(basis === 'raw' ? { ...pen, field: 'value' } : pen);
  }
  return pens;
}

export const writePens = (pens: Pen[]) => pens.map(penKey).join(',');

/** What a pen shows: its name and unit, from its site's configuration. */
export interface PenInfo {
  pen: Pen;
  label: string;
  unit: string | undefined;
  equipment: (Units & { name: string }) | undefined;
}

/** Up to eight colours, told apart on light and dark backgrounds. */
export const PEN_COLORS = [
  '#1f77d0',
  '#d9480f',
  '#2b9348',
  '#ae3ec9',
  '#c92a2a',
  '#0c8599',
  '#a87a00',
  '#7f7f7f',
];

export interface Trend {
  /** Seconds: every instant some pen has a value at. */
  x: number[];
  series: { label: string; values: (number | null)[]; color: string; scale: string }[];
  /** One y axis per unit; a pen without a unit has its own. */
  axes: { scale: string; label: string }[];
  rows: number;
}

/** The pens' values on one time axis (the union of their instants), and their axes. */
export function toTrend(
  infos: PenInfo[],
  answers: Map<string, unknown[]>,
  keyOf: (p: Pen) => string,
): Trend {
  const columns = infos.map((info) => {
    const rows = (answers.get(keyOf(info.pen)) ?? []) as Record<string, unknown>[];
    const field = info.pen.basis === 'raw' ? 'value' : info.pen.field;
    const time = info.pen.basis === 'raw' ? 'timestamp' : 'start';
    return new Map(
      rows.map((r) => [
        Date.parse(r[time] as string) / 1000,
        typeof r[field] === 'number' ? (r[field] as number) : null,
      ]),
    );
  });
  const x = [...new Set(columns.flatMap((c) => [...c.keys()]))].sort((a, b) => a - b);
  const axes: Trend['axes'] = [];
  const series = infos.map((info, i) => {
    const scale = info.unit ? `unit:${info.unit}` : `pen:${i}`;
    if (!axes.some((a) => a.scale === scale)) axes.push({ scale, label: info.unit ?? info.label });
    return {
      label: info.label,
      values: x.map((t) => columns[i].get(t) ?? null),
      color: PEN_COLORS[i % PEN_COLORS.length],
      scale,
    };
  });
  return { x, series, axes, rows: x.length };
}

/** The CSV of a trend: the instant (UTC, ISO 8601), then one column per pen. */
export function trendCsv(t: Trend): string {
  const cell = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const head = ['time', ...t.series.map((s) => s.label)].map(cell).join(',');
  const lines = t.x.map((x, i) =>
    [new Date(x * 1000).toISOString(), ...t.series.map((s) => s.values[i] ?? '')].join(','),
  );
  return [head, ...lines].join('\r\n') + '\r\n';
}
