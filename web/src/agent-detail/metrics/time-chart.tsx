// One uPlot time-series chart. uPlot draws on a canvas and owns its DOM, so React only gives it a
// container: the chart is created once per series layout, fed new data with setData, resized with its
// container, and rebuilt when the colour scheme flips (canvas colours cannot follow CSS by themselves).
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ChartData } from './chart-data';
import { chartTheme, formatValue, useColorScheme, type Unit } from './chart-theme';

const HEIGHT = 220;

interface Window {
  from: number;
  to: number;
}

function options(data: ChartData, title: string, unit: Unit, width: number, scheme: 'dark' | 'light', window: () => Window): uPlot.Options {
  const theme = chartTheme(scheme);
  const axis = { stroke: theme.text, grid: { stroke: theme.grid, width: 1 }, ticks: { stroke: theme.grid, width: 1 } };
  return {
    width,
    height: HEIGHT,
    // Percentages keep their 0–100 frame so a 3 % CPU does not look like a full one.
    scales: { x: { time: true, range: () => [window().from, window().to] }, y: unit === 'percent' ? { range: (_u, _min, max) => [0, Math.max(100, max)] } : { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [axis, { ...axis, size: unit === 'bits' ? 92 : 64, values: (_u, splits) => splits.map((v) => formatValue(unit, v)) }],
    series: [
      {},
      ...data.series.map((s, i) => ({
        // A metric without labels (CPU, memory) is one unnamed series: the legend names it after the chart.
        label: s.label || title,
        stroke: theme.palette[i % theme.palette.length]!,
        width: 1.5,
        value: (_u: uPlot, v: number | null) => (v === null || v === undefined ? '–' : formatValue(unit, v)),
      })),
    ],
    legend: { live: true },
    cursor: { drag: { x: true, y: false } },
  };
}

/** Column layout: uPlot wants [x, ...series]; its types ask for numbers or null. */
function columns(data: ChartData): uPlot.AlignedData {
  return [data.x, ...data.series.map((s) => s.values as (number | null)[])];
}

/** Draws `data` across the whole requested `window` (epoch seconds), so a new agent's few samples sit at the right end. */
export function TimeChart({ data, window, unit, title, description }: { data: ChartData; window: Window; unit: Unit; title: string; description: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const scheme = useColorScheme();
  // The chart is rebuilt only when the set of series changes; new values for the same series are a setData.
  const layout = `${scheme}|${unit}|${title}|${data.series.map((s) => s.label).join('\u0000')}`;
  const dataRef = useRef(data);
  dataRef.current = data;
  const windowRef = useRef(window);
  windowRef.current = window;

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const chart = new uPlot(options(dataRef.current, title, unit, element.clientWidth || 600, scheme, () => windowRef.current), columns(dataRef.current), element);
    plot.current = chart;
    const observer = new ResizeObserver(() => chart.setSize({ width: element.clientWidth, height: HEIGHT }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
      plot.current = null;
    };
    // `layout` stands for unit, scheme and the series labels; data changes go through setData below.
  }, [layout]);

  useEffect(() => {
    plot.current?.setData(columns(data));
  }, [data, window]);

  return <div ref={box} className="time-chart" role="img" aria-label={`${title}, ${description}`} />;
}
