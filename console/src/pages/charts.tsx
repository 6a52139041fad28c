import { useState } from 'preact/hooks';
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
import { chartQuery, readChartView } from '../chart-view.js';
import { useChartWidth } from '../chart-width.js';
import { formatTime, zoneOf } from '../format.js';
import { Status, useLoad } from '../load.js';
import { loadAllSites, loadSiteEquipment } from '../model.js';
import { navigate, useRoute, withQuery } from '../router.js';

/**
 * Charts: an equipment's summaries (sample or time-weighted averages) or a sensor's raw values (plot
 * values: about one part per two pixels of the chart, peaks kept) over a range, interval and time
 * zone; CSV of what is shown.
 */
export function ChartsPage() {
  const { query } = useRoute();
  // The end of a preset range is fixed when the page is opened, so reloading the chart shows the same window.
  const [now] = useState(() => Math.ceil(Date.now() / 60_000) * 60_000);
  const view = readChartView(query, now);
  const { site, kind, id, tz, interval, from, to, raw, timeWeighted } = view;
  const { area, width } = useChartWidth();
  const state = chartQuery(view, query);
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
      <ChartFilters
        view={view}
        customFrom={state.from}
        customTo={state.to}
        sites={sites.data}
        equipment={equipment.data?.equipment}
        picked={picked}
        go={go}
      />

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
