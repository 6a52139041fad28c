import type { Interval, Kind } from './api-schema.js';
import { isInterval, RANGES, RAW_MAX_MS } from './chart-data.js';
import { fromLocalInput, type ZoneChoice } from './format.js';
import { readPens, type Pen } from './pens.js';
import { isZoneChoice } from './zone.js';

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
  /** The window in ms: a preset's ends at `now`; a custom one is the URL's (wall-clock times of the zone). */
  from: number;
  to: number;
  /** Raw values may be asked for: a sensor, over at most RAW_MAX_MS. */
  rawAllowed: boolean;
  raw: boolean;
  timeWeighted: boolean;
  /** A multi-pen trend's series (none: the one equipment of site, kind and id). */
  pens: Pen[];
}

/** The zone choice the address names, else the person's. */
export const zoneChoiceOf = (query: URLSearchParams, chosen: ZoneChoice): ZoneChoice => {
  const tz = query.get('tz');
  return isZoneChoice(tz) ? tz : chosen;
};

/**
 * The view the query names, unknown values replaced by the defaults; `now` ends a preset range, the
 * times of a custom one are read in `zone` (that of the zone choice `tz`).
 */
export function readChartView(
  query: URLSearchParams,
  now: number,
  tz: ZoneChoice,
  zone: string,
): ChartView {
  const kind = (query.get('kind') ?? '') as Kind | '';
  const range =
    query.get('range') && (query.get('range') === 'custom' || RANGES[query.get('range')!])
      ? query.get('range')!
      : '24h';
  const askedInterval = query.get('interval');
  const interval = isInterval(askedInterval) ? askedInterval : (RANGES[range]?.interval ?? '1h');
  const from =
    range === 'custom'
      ? fromLocalInput(query.get('from') ?? '', zone) || now - 86_400_000
      : now - RANGES[range].ms;
  const to = range === 'custom' ? fromLocalInput(query.get('to') ?? '', zone) || now : now;
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
    pens: readPens(query.get('pens')),
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
    pens: query.get('pens') ?? '',
  };
}
