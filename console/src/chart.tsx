import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

// A uPlot time-series chart: x in seconds, times on the axis in the chosen zone.

export interface Series {
  label: string;
  values: (number | null)[];
  color: string;
  /** A band drawn thin and dashed (min and max around an average). */
  dashed?: boolean;
}

interface Props {
  x: number[];
  series: Series[];
  zone: string;
  units?: string;
  label: string;
  /** The x axis's range in seconds (the requested range) rather than that of the data, unless zoomed in. */
  span?: [number, number];
}

export function Chart({ x, series, zone, units, label, span }: Props) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const width = () => Math.max(280, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: Math.min(360, Math.max(220, Math.round(width() * 0.45))),
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), zone),
        scales: {
          x: {
            time: true,
            // The whole data (its first draw, a double click) shows the whole span; a zoom keeps its own.
            range: (_u, min, max) =>
              span && min <= x[0] && max >= x[x.length - 1] ? span : [min, max],
          },
        },
        axes: [{ stroke: '#333' }, { stroke: '#333', label: units, size: 60 }],
        series: [
          { label: 'Time' },
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            width: s.dashed ? 1 : 2,
            dash: s.dashed ? [4, 4] : undefined,
            points: { show: x.length < 60 },
          })),
        ],
      },
      [x, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: plot.height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series, zone, units, span?.[0], span?.[1]]);
  return <div class="chart" ref={box} role="img" aria-label={label} data-points={x.length} />;
}
