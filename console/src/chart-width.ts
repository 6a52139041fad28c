import { useLayoutEffect, useRef, useState } from 'preact/hooks';

/**
 * The width the chart will have, measured on the element `area` is put on before the chart exists
 * (at least 280 px); a change of less than a tenth keeps the width, and so the request made for it.
 */
export function useChartWidth() {
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
  return { area, width };
}
