// What a chart needs that CSS cannot give it: uPlot paints on a canvas, so its colours are read from the
// stylesheet's variables in JavaScript and the chart is redrawn when the light/dark scheme flips. The
// two palettes are GitHub-style hues tuned for contrast on the panel colour of each scheme.
import { useSyncExternalStore } from 'react';
import { formatBits, formatBytes } from '../../ui/format';

/** The heartbeat metrics' units, and those of check perfdata (kept in seconds and bytes, or as reported). */
export type Unit = 'percent' | 'ms' | 'bits' | 'seconds' | 'bytes' | 'plain';

const LIGHT = ['#1f6feb', '#cf222e', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7f8a', '#57606a'];
const DARK = ['#4c9aff', '#f85149', '#3fb950', '#d29922', '#a371f7', '#db61a2', '#39c5cf', '#9ea7b3'];

export interface ChartTheme {
  text: string;
  grid: string;
  palette: readonly string[];
}

const darkQuery = window.matchMedia('(prefers-color-scheme: dark)');

function subscribe(listener: () => void): () => void {
  darkQuery.addEventListener('change', listener);
  return () => darkQuery.removeEventListener('change', listener);
}

/** 'dark' or 'light', following the system setting live. */
export function useColorScheme(): 'dark' | 'light' {
  return useSyncExternalStore(subscribe, () => (darkQuery.matches ? 'dark' : 'light'));
}

/** The current scheme's colours, from the stylesheet's variables (with fallbacks if they are missing). */
export function chartTheme(scheme: 'dark' | 'light'): ChartTheme {
  const style = getComputedStyle(document.documentElement);
  const cssVar = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: cssVar('--muted', scheme === 'dark' ? '#93a0b0' : '#5d6878'),
    grid: cssVar('--line', scheme === 'dark' ? '#2a323c' : '#dde1e7'),
    palette: scheme === 'dark' ? DARK : LIGHT,
  };
}

/** Drops float noise (12.300000001) and needless zeros for axis ticks and legend values. */
const trim = (value: number, digits: number) => String(Number(value.toFixed(digits)));

export function formatValue(unit: Unit, value: number): string {
  switch (unit) {
    case 'percent':
      return `${trim(value, 1)} %`;
    case 'ms':
      return `${trim(value, value < 10 ? 2 : 1)} ms`;
    case 'bits':
      return formatBits(value);
    case 'seconds':
      return value < 1 ? `${trim(value * 1000, 1)} ms` : `${trim(value, 2)} s`;
    case 'bytes':
      return formatBytes(value);
    case 'plain':
      return trim(value, 2);
  }
}
