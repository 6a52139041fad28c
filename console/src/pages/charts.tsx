import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { saveAs } from '../api.js';
import { Chart } from '../chart.js';
import type { Kind } from '../api-schema.js';
import {
  fetchChart,
  isInterval,
  plotParts,
  RANGES,
  RAW_MAX_MS,
  toSeries,
  type ChartRequest,
  type ChartRows,
} from '../chart-data.js';
import { browserZone, formatTime, toLocalInput, zoneOf, type ZoneChoice } from '../format.js';
import { Status, useLoad } from '../load.js';
import { KIND_LABEL, loadAllSites, loadSiteEquipment } from '../model.js';
import { navigate, useRoute, withQuery } from '../router.js';
import { SiteSelect } from '../site-select.js';

const ZONES: { value: ZoneChoice; label: string }[] = [
  { value: 'site', label: 'Site' },
  { value: 'utc', label: 'UTC' },
  { value: 'browser', label: `Browser (${browserZone()})` },
];

/**
 * Charts: an equipment's summaries (sample or time-weighted averages) or a sensor's raw values (plot
 * values: about one part per two pixels of the chart, peaks kept) over a range, interval and time
 * zone; CSV of what is shown.
 */
export function ChartsPage() {
  const { query } = useRoute();
  const site = Number(query.get('site')) || 0;
  const kind = (query.get('kind') ?? '') as Kind | '';
  const id = Number(query.get('id')) || 0;
  const range =
    query.get('range') && (query.get('range') === 'custom' || RANGES[query.get('range')!])
      ? query.get('range')!
      : '24h';
  const tz = (
    ['utc', 'site', 'browser'].includes(query.get('tz') ?? '') ? query.get('tz') : 'site'
  ) as ZoneChoice;
  const askedInterval = query.get('interval');
  const interval = isInterval(askedInterval) ? askedInterval : (RANGES[range]?.interval ?? '1h');
  // The end of a preset range is fixed when the page is opened, so reloading the chart shows the same window.
  const [now] = useState(() => Math.ceil(Date.now() / 60_000) * 60_000);
  const from =
    range === 'custom'
      ? Date.parse(query.get('from') ?? '') || now - 86_400_000
      : now - RANGES[range].ms;
  const to = range === 'custom' ? Date.parse(query.get('to') ?? '') || now : now;
  const rawAllowed = kind === 'sensor' && to - from <= RAW_MAX_MS;
  const raw = rawAllowed && query.get('raw') === '1';
  const timeWeighted = kind !== 'meter' && query.get('avg') === 'time';
  // The width the chart will have, measured before it exists; a change of less than a tenth keeps the request.
  const area = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  useLayoutEffect(() => {
    const el = area.current!;
    const measure = () =>
      setWidth((w) => {
        const now = Math.max(280, el.clientWidth);
        return Math.abs(now - w) < w / 10 ? w : now;
      });
    measure();
    const resize = new ResizeObserver(measure);
    resize.observe(el);
    return () => resize.disconnect();
  }, []);
  const state = {
    site,
    kind,
    id,
    range,
    tz,
    interval,
    raw: raw ? 1 : '',
    avg: timeWeighted ? 'time' : '',
    from: range === 'custom' ? query.get('from') : '',
    to: range === 'custom' ? query.get('to') : '',
  };
  const go = (changes: Record<string, string | number>) =>
    navigate(withQuery('/charts', { ...state, ...changes }), { replace: true });

  const sites = useLoad((signal) => loadAllSites(signal), []);
  const equipment = useLoad(
    (signal) => (site ? loadSiteEquipment(site, signal) : Promise.resolve(undefined)),
    [site],
  );
  const siteZone = equipment.data?.site.TimeZone;
  const zone = zoneOf(tz, siteZone);
  const picked = equipment.data?.equipment.find((e) => e.kind === kind && e.id === id);
  const request: ChartRequest | undefined =
    picked && to > from && width
      ? {
          kind: picked.kind,
          id,
          start: new Date(from).toISOString(),
          end: new Date(to).toISOString(),
          interval,
          timeZone: tz === 'utc' ? 'UTC' : tz === 'site' ? 'site' : zone,
          basis: timeWeighted ? 'timeWeighted' : 'eventWeighted',
          raw,
          intervals: raw ? plotParts(width) : 0,
        }
      : undefined;
  // The caption travels with the data, so a chart still on screen while the next one loads keeps its own.
  const caption =
    picked &&
    `${picked.name}: ${raw ? `raw values (plot values of ${request?.intervals} parts)` : `${interval} summaries${timeWeighted ? ', time-weighted' : ''}`}, ${formatTime(from, zone)} to ${formatTime(to, zone)} (${zone})`;
  const data = useLoad(
    async (signal) =>
      request
        ? {
            ...toSeries(
              request,
              (await (await fetchChart(request, 'application/json', signal)).json()) as ChartRows,
              picked?.units,
            ),
            caption,
            raw,
            span: [from / 1000, to / 1000] as [number, number],
          }
        : undefined,
    [JSON.stringify(request), caption],
  );
  const [csvError, setCsvError] = useState('');
  const downloadCsv = async () => {
    setCsvError('');
    try {
      await saveAs(
        await fetchChart(request!, 'text/csv'),
        `${kind}-${id}-${raw ? 'raw' : `${interval}${timeWeighted ? '-time-weighted' : ''}`}.csv`,
      );
    } catch (err) {
      setCsvError((err as Error).message);
    }
  };

  return (
    <section>
      <h1>Charts</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div>
          <SiteSelect
            id="chart-site"
            value={site}
            sites={sites.data}
            none="Choose a site"
            onChange={(v) => go({ site: v, kind: '', id: '' })}
          />
        </div>
        <div>
          <label for="chart-equipment">Equipment</label>
          <select
            id="chart-equipment"
            value={picked ? `${kind}:${id}` : ''}
            disabled={!equipment.data}
            onChange={(e) => {
              const [k, i] = e.currentTarget.value.split(':');
              go({ kind: k ?? '', id: i ?? '' });
            }}
          >
            <option value="">Choose equipment</option>
            {(Object.keys(KIND_LABEL) as Kind[]).map((k) => (
              <optgroup key={k} label={KIND_LABEL[k]}>
                {equipment.data?.equipment
                  .filter((e) => e.kind === k)
                  .map((e) => (
                    <option key={e.id} value={`${k}:${e.id}`}>
                      {e.name}
                    </option>
                  ))}
              </optgroup>
            ))}
          </select>
        </div>
        <fieldset class="presets">
          <legend>Range</legend>
          {[...Object.entries(RANGES).map(([k, r]) => [k, r.label]), ['custom', 'Custom']].map(
            ([k, label]) => (
              <button
                type="button"
                key={k}
                aria-pressed={range === k}
                onClick={() =>
                  go(
                    k === 'custom'
                      ? { range: k, from: toLocalInput(from), to: toLocalInput(to) }
                      : { range: k, interval: '' },
                  )
                }
              >
                {label}
              </button>
            ),
          )}
        </fieldset>
        {range === 'custom' && (
          <>
            <div>
              <label for="chart-from">From</label>
              <input
                id="chart-from"
                type="datetime-local"
                value={state.from ?? ''}
                onChange={(e) => go({ from: e.currentTarget.value })}
              />
            </div>
            <div>
              <label for="chart-to">To</label>
              <input
                id="chart-to"
                type="datetime-local"
                value={state.to ?? ''}
                onChange={(e) => go({ to: e.currentTarget.value })}
              />
            </div>
          </>
        )}
        <div>
          <label for="chart-interval">Interval</label>
          <select
            id="chart-interval"
            value={interval}
            disabled={raw}
            onChange={(e) => go({ interval: e.currentTarget.value })}
          >
            <option value="15m">15 minutes</option>
            <option value="1h">1 hour</option>
            <option value="1d">1 day</option>
          </select>
        </div>
        <div>
          <label for="chart-tz">Time zone</label>
          <select id="chart-tz" value={tz} onChange={(e) => go({ tz: e.currentTarget.value })}>
            {ZONES.map((z) => (
              <option key={z.value} value={z.value}>
                {z.label}
              </option>
            ))}
          </select>
        </div>
        {kind && kind !== 'meter' && (
          <div>
            <label for="chart-avg">Average</label>
            <select
              id="chart-avg"
              value={timeWeighted ? 'time' : ''}
              disabled={raw}
              onChange={(e) => go({ avg: e.currentTarget.value })}
            >
              <option value="">Sample average</option>
              <option value="time">Time-weighted</option>
            </select>
          </div>
        )}
        {kind === 'sensor' && (
          <div class="check">
            <input
              id="chart-raw"
              type="checkbox"
              checked={raw}
              disabled={!rawAllowed}
              onChange={(e) => go({ raw: e.currentTarget.checked ? 1 : '' })}
            />
            <label for="chart-raw">Raw values{rawAllowed ? '' : ' (366 days at most)'}</label>
          </div>
        )}
      </form>

      <div ref={area}>
        {!picked ? (
          <p class="muted">
            {site ? 'Choose equipment to chart.' : 'Choose a site, then equipment.'}
          </p>
        ) : to <= from ? (
          <p class="error" role="alert">
            The end of the range must be after its start.
          </p>
        ) : (
          <Status load={data} what="the chart">
            {(d) =>
              d && (
                <figure>
                  <figcaption>
                    {d.caption} · {d.rows} {d.raw ? 'values' : 'buckets'}
                  </figcaption>
                  {d.rows ? (
                    <Chart
                      x={d.x}
                      series={d.series}
                      zone={zone}
                      units={d.units}
                      span={d.span}
                      label={`Chart of ${picked.name}`}
                    />
                  ) : (
                    <p class="muted">No data in this range.</p>
                  )}
                  <button type="button" onClick={downloadCsv} disabled={!d.rows}>
                    Download CSV
                  </button>
                  {csvError && (
                    <p class="error" role="alert">
                      {csvError}
                    </p>
                  )}
                </figure>
              )
            }
          </Status>
        )}
      </div>
    </section>
  );
}
