// The metric reads behind the charts (contract §4) and the hooks that keep them fresh. Labels are disk
// mounts and interface or gateway names chosen by the agent (React shows them as text), and a row whose
// time does not parse is dropped rather than drawn as garbage.
import type { ApiBody, ApiQuery } from '../../api/api-types';
import { api } from '../../api/client';
import { useResource, type Resource } from '../../use-resource';
import { buildChartData, type ChartData, type Point } from './chart-data';
import { windowOf, type TimeRange } from './ranges';

/** The metrics the page charts from their summaries (a part of what the server records). */
export type SummaryMetric = Extract<ApiQuery<'/agents/{id}/metrics/summary'>['metric'], 'cpu_usage' | 'memory_used_percent' | 'disk_used_percent' | 'gateway_rtt_ms' | 'gateway_loss_percent' | 'check_perf'>;

export const RECEIVED = 'Received';
export const TRANSMITTED = 'Transmitted';

/** Chart data tagged with the range it was loaded for, so a card never shows one range under another's name. */
export interface RangedChart {
  rangeId: string;
  chart: ChartData;
  /** The window asked for, in epoch seconds: the chart spans all of it, however few samples fell in it. */
  window: { from: number; to: number };
}

type Window = { from: string; to: string };
const epochSeconds = (w: Window) => ({ from: Date.parse(w.from) / 1000, to: Date.parse(w.to) / 1000 });

const agentPath = (agentId: string, rest: string) => `/agents/${encodeURIComponent(agentId)}/metrics${rest}`;
const seconds = (iso: string) => Date.parse(iso) / 1000;

async function loadSummary(agentId: string, metric: SummaryMetric, label: string | undefined, range: TimeRange, window: Window, signal: AbortSignal): Promise<Point[]> {
  const rows = await api<ApiBody<'/agents/{id}/metrics/summary'>>(agentPath(agentId, '/summary'), { query: { metric, label, bucket: range.bucket, ...window }, signal });
  return rows.flatMap((row) => {
    const t = seconds(row.bucket);
    return Number.isFinite(t) ? [{ t, label: row.label, value: row.avg }] : [];
  });
}

/** Averaged per bucket by the server (`bucket` on the rates endpoint), so 90 days stay a few hundred points. */
async function loadRates(agentId: string, iface: string, range: TimeRange, window: Window, signal: AbortSignal): Promise<Point[]> {
  const query = { interface: iface, bucket: range.bucket, ...window, limit: 10_000 };
  const rows = await api<ApiBody<'/agents/{id}/metrics/rates'>>(agentPath(agentId, '/rates'), { query, signal });
  return rows.flatMap((row): Point[] => {
    const t = seconds(row.time);
    if (!Number.isFinite(t)) return [];
    return [
      { t, label: RECEIVED, value: row.rx_bps },
      { t, label: TRANSMITTED, value: row.tx_bps },
    ];
  });
}

export interface InterfaceList {
  names: string[];
  /** The interface that moved the most bytes since its counters started: usually the uplink. */
  busiest: string | undefined;
}

/** The interfaces with byte counters in the agent's recent heartbeats (from /metrics/latest). */
async function loadInterfaces(agentId: string, signal: AbortSignal): Promise<InterfaceList> {
  const samples = await api<ApiBody<'/agents/{id}/metrics/latest'>>(agentPath(agentId, '/latest'), { signal });
  const totals = new Map<string, number>();
  for (const { metric, label, value } of samples) {
    if ((metric !== 'interface_rx_bytes' && metric !== 'interface_tx_bytes') || label === '') continue;
    totals.set(label, (totals.get(label) ?? 0) + value);
  }
  const names = [...totals.keys()].sort(new Intl.Collator(undefined, { numeric: true }).compare);
  const busiest = [...totals].sort((a, b) => b[1] - a[1])[0]?.[0];
  return { names, busiest };
}

/** `label` narrows to one series: a check's perfdata is `check_perf` labelled `<check id>/<perfdata label>`. */
export function useSummaryChart(agentId: string, metric: SummaryMetric, range: TimeRange, label?: string): Resource<RangedChart> {
  return useResource(
    async (signal) => {
      const window = windowOf(range);
      const points = await loadSummary(agentId, metric, label, range, window, signal);
      return { rangeId: range.id, chart: buildChartData(points, range.bucketSeconds), window: epochSeconds(window) };
    },
    [agentId, metric, label, range.id],
    { refreshMs: range.refreshMs },
  );
}

export function useRatesChart(agentId: string, iface: string | undefined, range: TimeRange): Resource<RangedChart> {
  return useResource(
    async (signal) => {
      const window = windowOf(range);
      const points = iface === undefined ? [] : await loadRates(agentId, iface, range, window, signal);
      return { rangeId: `${range.id}/${iface ?? ''}`, chart: buildChartData(points, range.bucketSeconds, [RECEIVED, TRANSMITTED]), window: epochSeconds(window) };
    },
    [agentId, iface, range.id],
    { refreshMs: range.refreshMs },
  );
}

/** Interfaces come and go rarely; the list follows the charts' refresh only on the short ranges. */
export function useInterfaces(agentId: string, range: TimeRange): Resource<InterfaceList> {
  return useResource((signal) => loadInterfaces(agentId, signal), [agentId], { refreshMs: range.refreshMs });
}

/** The chart for the range now chosen, or undefined while it loads (stale data of another range is not shown). */
export function chartFor(resource: Resource<RangedChart>, rangeId: string): RangedChart | undefined {
  return resource.data?.rangeId === rangeId ? resource.data : undefined;
}
