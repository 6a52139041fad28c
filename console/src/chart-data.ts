import { send } from './api.js';
import type {
  CalculationBasis,
  Interval,
  Kind,
  MeterSummary,
  PumpSummary,
  SensorPlotValue,
  SensorSummary,
  TankSummary,
} from './api-schema.js';
import type { Series } from './chart.js';

// What the charts page asks of the download routes, and how an answer becomes chart series.

export const RANGES: Record<string, { label: string; ms: number; interval: Interval }> = {
  '24h': { label: '24 h', ms: 86_400_000, interval: '15m' },
  '7d': { label: '7 d', ms: 7 * 86_400_000, interval: '1h' },
  '30d': { label: '30 d', ms: 30 * 86_400_000, interval: '1d' },
  '1y': { label: '1 y', ms: 365 * 86_400_000, interval: '1d' },
};
export const INTERVALS: Interval[] = ['15m', '1h', '1d'];
export const isInterval = (s: string | null): s is Interval => INTERVALS.includes(s as Interval);
/** Raw sensor values (plot values: stored samples, peaks kept at any zoom) are offered up to the route's span. */
export const RAW_MAX_MS = 366 * 86_400_000;
/** Parts of the plot route for a chart of this width: about one per two pixels (1 to 2000). */
export const plotParts = (width: number) => Math.min(2000, Math.max(1, Math.round(width / 2)));

export interface ChartRequest {
  kind: Kind;
  id: number;
  start: string;
  end: string;
  interval: Interval;
  /** 'UTC', 'site' or an IANA zone: where buckets start. */
  timeZone: string;
  /** Summary averages: of the samples (eventWeighted) or over time (timeWeighted). */
  basis: CalculationBasis;
  raw: boolean;
  /** Parts of the plot route (raw values only). */
  intervals: number;
}

/** The download call a chart shows, as JSON or (for the CSV button) as CSV. */
export function fetchChart(
  r: ChartRequest,
  accept: 'application/json' | 'text/csv',
  signal?: AbortSignal,
): Promise<Response> {
  const opts = { accept, signal };
  if (r.raw)
    return send(
      '/v1/sensors/logs/plot',
      { sensorId: r.id, start: r.start, end: r.end, intervals: r.intervals },
      opts,
    );
  const span = {
    start: r.start,
    end: r.end,
    interval: r.interval,
    timeZone: r.timeZone,
    calculationBasis: r.basis,
  };
  switch (r.kind) {
    case 'sensor':
      return send('/v1/sensors/logs/load', { sensorIds: [r.id], ...span }, opts);
    case 'meter':
      return send('/v1/meters/logs/load', { meterIds: [r.id], ...span }, opts);
    case 'pump':
      return send('/v1/pumps/logs/load', { pumpIds: [r.id], ...span }, opts);
    case 'tank':
      return send('/v1/tanks/logs/load', { tankGroupIds: [r.id], ...span }, opts);
  }
}

/** The JSON rows of each download a chart shows. */
export type ChartRows =
  SensorPlotValue[] | SensorSummary[] | MeterSummary[] | PumpSummary[] | TankSummary[];

export interface ChartData {
  x: number[];
  series: Series[];
  units?: string;
  rows: number;
}

// Field names are the DTOs' (a renamed one fails the type check).
const col = <R>(rows: R[], k: keyof R) =>
  rows.map((r) => (typeof r[k] === 'number' ? (r[k] as number) : null));
const band = <R>(rows: R[], lo: keyof R, avg: keyof R, hi: keyof R, tw: boolean): Series[] => [
  { label: 'Min', values: col(rows, lo), color: '#5a8f29', dashed: true },
  { label: tw ? 'Time-weighted average' : 'Average', values: col(rows, avg), color: '#1f5fbf' },
  { label: 'Max', values: col(rows, hi), color: '#b3261e', dashed: true },
];

/** Series per kind: min/avg/max for sensors and tank levels, volume for meters, running % for pumps. */
export function toSeries(r: ChartRequest, rows: ChartRows, units?: string): ChartData {
  const tw = r.basis === 'timeWeighted';
  if (r.raw) {
    const raws = rows as SensorPlotValue[];
    return {
      x: raws.map((r) => Date.parse(r.timestamp) / 1000),
      series: [{ label: 'Value', values: col(raws, 'value'), color: '#1f5fbf' }],
      units,
      rows: rows.length,
    };
  }
  const x = (rows as { start: string }[]).map((r) => Date.parse(r.start) / 1000);
  switch (r.kind) {
    case 'sensor':
      return {
        x,
        series: band(rows as SensorSummary[], 'min', 'avg', 'max', tw),
        units,
        rows: rows.length,
      };
    case 'meter':
      return {
        x,
        series: [
          { label: 'Volume', values: col(rows as MeterSummary[], 'volume'), color: '#1f5fbf' },
        ],
        units,
        rows: rows.length,
      };
    case 'pump':
      return {
        x,
        series: [
          {
            label: tw ? 'Running % (time-weighted)' : 'Running %',
            values: col(rows as PumpSummary[], 'runningPercent'),
            color: '#1f5fbf',
          },
        ],
        units: '%',
        rows: rows.length,
      };
    case 'tank':
      return {
        x,
        series: band(
          rows as TankSummary[],
          'minEntryTankLevel',
          'avgEntryTankLevel',
          'maxEntryTankLevel',
          tw,
        ),
        units: units ?? 'ft',
        rows: rows.length,
      };
  }
}
