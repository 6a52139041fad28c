import type { Interval, Kind } from './api-schema.js';
import { isInterval, RANGES, RAW_MAX_MS } from './chart-data.js';
import type { ZoneChoice } from './format.js';

// What the charts page shows, as its URL says it: the page keeps no state of its own, so a bookmark
// or a reload shows the same chart.

export interface ChartView {
  site: number;
  kind: Kind | '';
  id: number;
  /** A key of RANGES, or 'custom'. */
  range: string;
  tz: ZoneChoice;
  interval: Interval;
  /** The window in ms: a preset's ends at `now`; a custom one is the URL's (local times). */
  from: number;
  to: number;
  /** Raw values may be asked for: a sensor, over at most RAW_MAX_MS. */
  rawAllowed: boolean;
  raw: boolean;
  timeWeighted: boolean;
}

/** The view the query names, unknown values replaced by the defaults; `now` ends a preset range. */
export function readChartView(query: URLSearchParams, now: number): ChartView {
  const kind = (query.get('kind') ?? '') as Kind | '';
  const range =
    query.get('range') && (query.get('range') === 'custom' || RANGES[query.get('range')!])
      ? query.get('range')!
      : '24h';
  const tz = (
    ['utc', 'site', 'browser'].includes(query.get('tz') ?? '') ? query.get('tz') : 'site'
  ) as ZoneChoice;
  const askedInterval = query.get('interval');
  const interval = isInterval(askedInterval) ? askedInterval : (RANGES[range]?.interval ?? '1h');
  const from =
    range === 'custom'
      ? Date.parse(query.get('from') ?? '') || now - 86_400_000
      : now - RANGES[range].ms;
  const to = range === 'custom' ? Date.parse(query.get('to') ?? '') || now : now;
  const rawAllowed = kind === 'sensor' && to - from <= RAW_MAX_MS;
  return {
    site: Number(query.get('site')) || 0,
    kind,
    id: Number(query.get('id')) || 0,
    range,
    tz,
    interval,
    from,
    to,
    rawAllowed,
    raw: rawAllowed && query.get('raw') === '1',
    timeWeighted: kind !== 'meter' && query.get('avg') === 'time',
  };
}

/** The query of a view (a custom range keeps its local times as typed); the page's links start from it. */
export function chartQuery(view: ChartView, query: URLSearchParams) {
  const custom = view.range === 'custom';
  return {
    site: view.site,
    kind: view.kind,
    id: view.id,
    range: view.range,
    tz: view.tz,
    interval: view.interval,
    raw: view.raw ? 1 : '',
    avg: view.timeWeighted ? 'time' : '',
    from: custom ? query.get('from') : '',
    to: custom ? query.get('to') : '',
  };
}
