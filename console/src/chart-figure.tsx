import { Chart } from './chart.js';
import type { ChartData } from './chart-data.js';

/** A loaded chart as the charts page shows it: what the series are, and the window they cover. */
export interface ShownChart extends ChartData {
  caption: string | undefined;
  raw: boolean;
  /** The window in seconds, the chart's x scale. */
  span: [number, number];
}

/** The chart with its caption and row count, and the CSV download of what it shows. */
export function ChartFigure({
  chart,
  zone,
  name,
  onDownloadCsv,
  csvError,
}: {
  chart: ShownChart;
  zone: string;
  /** The equipment's name, for the chart's accessible label. */
  name: string;
  onDownloadCsv: () => void;
  csvError: string;
}) {
  return (
    <figure>
      <figcaption>
        {chart.caption} · {chart.rows} {chart.raw ? 'values' : 'buckets'}
      </figcaption>
      {chart.rows ? (
        <Chart
          x={chart.x}
          series={chart.series}
          zone={zone}
          units={chart.units}
          span={chart.span}
          label={`Chart of ${name}`}
        />
      ) : (
        <p class="muted">No data in this range.</p>
      )}
      <button type="button" onClick={onDownloadCsv} disabled={!chart.rows}>
        Download CSV
      </button>
      {csvError && (
        <p class="error" role="alert">
          {csvError}
        </p>
      )}
    </figure>
  );
}
