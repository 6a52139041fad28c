import { useEffect, useRef, useState } from 'preact/hooks';
import { saveAs } from '../api.js';
import {
  fetchChart,
  plotParts,
  toSeries,
  type ChartRequest,
  type ChartRows,
} from '../chart-data.js';
import { ChartFigure } from '../chart-figure.js';
import { ChartFilters } from '../chart-filters.js';
import { RangeControls } from '../chart-filters.js';
import { chartQuery, readChartView, zoneChoiceOf } from '../chart-view.js';
import { useChartWidth } from '../chart-width.js';
import { formatTime, toLocalInput, zoneOf } from '../format.js';
import { Status, useLoad } from '../load.js';
import {
  levelUnits,
  loadAllSites,
  loadSiteEquipment,
  type Equipment,
  type SiteEquipment,
} from '../model.js';
import { readPens, writePens, type Pen } from '../pens.js';
import { navigate, useRoute, withQuery } from '../router.js';
import { TrendPanel } from '../trend.js';
import { chooseZone, useSiteZone, useZone } from '../zone.js';

/** The pen that stands for one equipment's chart: its main figure, on the same basis. */
function penOf(e: Equipment, site: number, raw: boolean, timeWeighted: boolean): Pen {
  const field = {
    sensor: 'avg',
    meter: 'volume',
    pump: 'runningPercent',
    tank: 'avgEntryTankLevel',
  }[e.kind];
  return {
    site,
    kind: e.kind,
    id: e.id,
    field: raw ? 'value' : field,
    basis: raw ? 'raw' : timeWeighted && e.kind !== 'meter' ? 'time' : 'sample',
  };
}

/**
 * Charts: an equipment's summaries (sample or time-weighted averages) or a sensor's raw values (plot
 * values: about one part per two pixels of the chart, peaks kept) over a range, interval and time
 * zone; or a multi-pen trend (`pens`); CSV of what is shown.
 */
export function ChartsPage() {
  const { query } = useRoute();
  // The end of a preset range is fixed when the page is opened, so reloading the chart shows the same window.
  const [now] = useState(() => Math.ceil(Date.now() / 60_000) * 60_000);
  const chosen = useZone().choice;
  const tz = zoneChoiceOf(query, chosen);
  const pens = readPens(query.get('pens'));
  const single = Number(query.get('site')) || 0;
  const siteIds = pens.length ? [...new Set(pens.map((p) => p.site))] : single ? [single] : [];
  const configs = useLoad(
    async (signal) =>
      new Map<number, SiteEquipment>(
        await Promise.all(
          siteIds.map(async (s) => [s, await loadSiteEquipment(s, signal)] as const),
        ),
      ),
    [siteIds.join(',')],
  );
  // "Site" means a zone only while every series is of one site.
  const oneSite = siteIds.length === 1 ? configs.data?.get(siteIds[0])?.site : undefined;
  useSiteZone(oneSite ? oneSite.TimeZone : undefined);
  const zone = zoneOf(tz, oneSite?.TimeZone);
  const view = readChartView(query, now, tz, zone);
  const { site, kind, id, interval, from, to, raw, timeWeighted } = view;
  const { area, width } = useChartWidth();
  const state = chartQuery(view, query);
  const go = (changes: Record<string, string | number>) =>
    navigate(withQuery('/charts', { ...state, ...changes }), { replace: true });

  // The address's zone is the person's choice while the page is open; a choice made in the header
  // goes into the address, a custom range keeping its instants.
  useEffect(() => {
    if (tz !== chosen) chooseZone(tz);
    // The address always names its zone, so a custom range's times keep their meaning when it changes.
    else if (query.get('tz') !== tz) go({});
  }, []);
  const last = useRef(chosen);
  useEffect(() => {
    if (last.current === chosen) return;
    last.current = chosen;
    const next = zoneOf(chosen, oneSite?.TimeZone);
    go(
      view.range === 'custom'
        ? { tz: chosen, from: toLocalInput(from, next), to: toLocalInput(to, next) }
        : { tz: chosen },
    );
  }, [chosen]);

  const sites = useLoad((signal) => loadAllSites(signal), []);
  const equipment = { data: pens.length ? undefined : configs.data?.get(site) };
  const picked = equipment.data?.equipment.find((e) => e.kind === kind && e.id === id);
  const request: ChartRequest | undefined =
    picked && to > from && width
      ? {
          kind: picked.kind,
          id,
          start: new Date(from).toISOString(),
          end: new Date(to).toISOString(),
          interval,
          timeZone: zone,
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
              picked && (picked.kind === 'tank' ? levelUnits(picked) : picked.units),
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

  if (pens.length)
    return (
      <section>
        <h1>Charts</h1>
        <p class="muted">
          A trend of up to 8 pens from any sites, on one time axis with a y axis per unit.{' '}
          <button type="button" class="secondary" onClick={() => go({ pens: '' })}>
            Back to one equipment
          </button>
        </p>
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <RangeControls
            view={view}
            customFrom={state.from}
            customTo={state.to}
            zone={zone}
            noInterval={pens.every((p) => p.basis === 'raw')}
            go={go}
          />
        </form>
        <div ref={area}>
          <Status load={configs} what="the pens' sites">
            {(c) => (
              <TrendPanel
                view={view}
                pens={pens}
                configs={c}
                sites={sites.data}
                zone={zone}
                width={width}
                go={go}
              />
            )}
          </Status>
        </div>
      </section>
    );

  return (
    <section>
      <h1>Charts</h1>
      <ChartFilters
        view={view}
        customFrom={state.from}
        customTo={state.to}
        sites={sites.data}
        equipment={equipment.data?.equipment}
        picked={picked}
        zone={zone}
        go={go}
      />
      {picked && (
        <p>
          <button
            type="button"
            class="secondary"
            onClick={() =>
              go({
                pens: writePens([penOf(picked, site, raw, timeWeighted)]),
                site: '',
                kind: '',
                id: '',
                raw: '',
                avg: '',
              })
            }
          >
            Compare with other equipment
          </button>
        </p>
      )}

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
                <ChartFigure
                  chart={d}
                  zone={zone}
                  name={picked.name}
                  onDownloadCsv={downloadCsv}
                  csvError={csvError}
                />
              )
            }
          </Status>
        )}
      </div>
    </section>
  );
}
