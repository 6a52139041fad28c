import { call } from './api.js';
import type { Kind } from './model.js';
import type { Series } from './chart.js';

// What the charts page asks of the download routes, and how an answer becomes chart series.

export const RANGES: Record<string, { label: string; ms: number; interval: string }> = {
  '24h': { label: '24 h', ms: 86_400_000, interval: '15m' },
  '7d': { label: '7 d', ms: 7 * 86_400_000, interval: '1h' },
  '30d': { label: '30 d', ms: 30 * 86_400_000, interval: '1d' },
  '1y': { label: '1 y', ms: 365 * 86_400_000, interval: '1d' },
};
export const INTERVALS = ['15m', '1h', '1d'];
/** Raw sensor values are offered up to this span (the route allows 60 days; more is unreadable as a line). */
export const RAW_MAX_MS = 7 * 86_400_000;

export interface ChartRequest {
  kind: Kind;
  id: number;
  start: string;
  end: string;
  interval: string;
  /** 'UTC', 'site' or an IANA zone: where buckets start. */
  timeZone: string;
  raw: boolean;
}

const SUMMARY: Record<Kind, { path: string; ids: string }> = {
  sensor: { path: '/v1/sensors/logs/load', ids: 'sensorIds' },
  meter: { path: '/v1/meters/logs/load', ids: 'meterIds' },
  pump: { path: '/v1/pumps/logs/load', ids: 'pumpIds' },
  tank: { path: '/v1/tanks/logs/load', ids: 'tankGroupIds' },
};

/** The download call a chart shows, as JSON or (for the CSV button) as CSV. */
export function fetchChart(
  r: ChartRequest,
  accept: 'application/json' | 'text/csv',
  signal?: AbortSignal,
): Promise<Response> {
  if (r.raw)
    return call('/v1/sensors/logs/raw', {
      body: { sensorId: r.id, start: r.start, end: r.end },
      accept,
      signal,
    });
  const s = SUMMARY[r.kind];
  return call(s.path, {
    body: {
      [s.ids]: [r.id],
      start: r.start,
      end: r.end,
      interval: r.interval,
      timeZone: r.timeZone,
    },
    accept,
    signal,
  });
}

type Row = Record<string, number | string | null>;

export interface ChartData {
  x: number[];
  series: Series[];
  units?: string;
  rows: number;
}

const col = (rows: Row[], k: string) =>
  rows.map((r) => (typeof r[k] === 'number' ? (r[k] as number) : null));

/** Series per kind: min/avg/max for sensors and tank levels, volume for meters, running % for pumps. */
export function toSeries(kind: Kind, raw: boolean, rows: Row[], units?: string): ChartData {
  if (raw)
    return {
      x: rows.map((r) => Date.parse(r.timestamp as string) / 1000),
      series: [{ label: 'Value', values: col(rows, 'value'), color: '#1f5fbf' }],
      units,
      rows: rows.length,
    };
  const x = rows.map((r) => Date.parse(r.start as string) / 1000);
  const band = (lo: string, avg: string, hi: string): Series[] => [
    { label: 'Min', values: col(rows, lo), color: '#5a8f29', dashed: true },
    { label: 'Average', values: col(rows, avg), color: '#1f5fbf' },
    { label: 'Max', values: col(rows, hi), color: '#b3261e', dashed: true },
  ];
  switch (kind) {
    case 'sensor':
      return { x, series: band('min', 'avg', 'max'), units, rows: rows.length };
    case 'meter':
      return {
        x,
        series: [{ label: 'Volume', values: col(rows, 'volume'), color: '#1f5fbf' }],
        units,
        rows: rows.length,
      };
    case 'pump':
      return {
        x,
        series: [{ label: 'Running %', values: col(rows, 'runningPercent'), color: '#1f5fbf' }],
        units: '%',
        rows: rows.length,
      };
    case 'tank':
      return {
        x,
        series: band('minEntryTankLevel', 'avgEntryTankLevel', 'maxEntryTankLevel'),
        units: 'ft',
        rows: rows.length,
      };
  }
}
