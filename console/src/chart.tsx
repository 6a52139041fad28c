import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useTheme } from './theme.js';

// A uPlot time-series chart: x in seconds, times on the axis in the chosen zone.

export interface Series {
  label: string;
  values: (number | null)[];
  color: string;
  /** A band drawn thin and dashed (min and max around an average). */
  dashed?: boolean;
  /** The y scale it is drawn on (`axes`); the one scale 'y' by default. */
  scale?: string;
}

interface Props {
  x: number[];
  series: Series[];
  zone: string;
  units?: string;
  label: string;
  /** The x axis's range in seconds (the requested range) rather than that of the data, unless zoomed in. */
  span?: [number, number];
  /** Several y axes (one per unit), left and right in turn; by default one, labelled `units`. */
  axes?: { scale: string; label: string }[];
}

/** Lighter shades of the charts' line colours, for the dark theme. */
const ON_DARK: Record<string, string> = {
  '#1f5fbf': '#6ea8ff',
  '#5a8f29': '#8fd14f',
  '#b3261e': '#ff7b72',
  '#1f77d0': '#6ea8ff',
  '#d9480f': '#ff8c42',
  '#2b9348': '#69db7c',
  '#ae3ec9': '#da77f2',
  '#c92a2a': '#ff6b6b',
  '#0c8599': '#3bc9db',
  '#a87a00': '#ffd43b',
  '#7f7f7f': '#ced4da',
};

/** A line's colour on the page's theme. */
export const lineColor = (color: string, theme: string) =>
  theme === 'dark' ? (ON_DARK[color] ?? color) : color;

export function Chart({ x, series, zone, units, label, span, axes }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const theme = useTheme();
  useEffect(() => {
    const el = box.current!;
    // Axes, ticks and grid in the page's text colour, so the chart reads on either theme.
    const ink = getComputedStyle(el).color;
    const grid = { stroke: theme === 'dark' ? '#ffffff22' : '#00000014' };
    const yAxes = (axes ?? [{ scale: 'y', label: units ?? '' }]).map((a, i) => ({
      scale: a.scale,
      label: a.label,
      side: i % 2 ? 1 : 3,
      stroke: ink,
      grid: { ...grid, show: i === 0 },
      ticks: grid,
      size: 60,
    }));
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
        axes: [{ stroke: ink, grid, ticks: grid }, ...yAxes],
        series: [
          { label: 'Time' },
          ...series.map((s) => ({
            label: s.label,
            scale: s.scale ?? 'y',
            spanGaps: !!axes,
            stroke: lineColor(s.color, theme),
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
  }, [x, series, zone, units, span?.[0], span?.[1], axes, theme]);
  return <div class="chart" ref={box} role="img" aria-label={label} data-points={x.length} />;
}
