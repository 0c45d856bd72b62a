// The agent's time series: CPU, memory, disk per mount, an interface's receive/transmit bit rates and
// gateway latency and loss, over a range chosen with buttons (kept in the URL as ?range=, so a reload or
// a shared link shows the same window). Each chart loads on its own: a slow one does not hold the rest.
import type { ReactNode } from 'react';
import { setQuery, useQuery } from '../../router';
import type { Resource } from '../../use-resource';
import { Empty, ErrorBanner } from '../../ui/widgets';
import type { TabProps } from '../tab-props';
import { isEmpty } from './chart-data';
import type { Unit } from './chart-theme';
import { chartFor, useInterfaces, useRatesChart, useSummaryChart, type RangedChart, type SummaryMetric } from './metric-queries';
import { defaultRangeFor, RANGES, rangeById, type TimeRange } from './ranges';
import { TimeChart } from './time-chart';
import './metrics.css';

interface GaugeChart {
  metric: SummaryMetric;
  title: string;
  unit: Unit;
}

const GAUGES: readonly GaugeChart[] = [
  { metric: 'cpu_usage', title: 'CPU', unit: 'percent' },
  { metric: 'memory_used_percent', title: 'Memory used', unit: 'percent' },
  { metric: 'disk_used_percent', title: 'Disk used, per mount', unit: 'percent' },
  { metric: 'gateway_rtt_ms', title: 'Gateway round-trip time', unit: 'ms' },
  { metric: 'gateway_loss_percent', title: 'Gateway packet loss', unit: 'percent' },
];

export function MetricsTab({ agent }: TabProps) {
  const fallback = defaultRangeFor(agent.created_at);
  const range = rangeById(useQuery().get('range'), fallback);
  return (
    <div className="metrics-tab">
      <div className="row metrics-head">
        <div className="segmented" role="group" aria-label="Time range">
          {RANGES.map((r) => (
            <button key={r.id} type="button" aria-pressed={r.id === range.id} onClick={() => setQuery({ range: r.id === fallback.id ? undefined : r.id })}>
              {r.label}
            </button>
          ))}
        </div>
        <span className="muted">
          {range.description}, averaged per {range.bucket}
          {range.refreshMs ? '; refreshed every minute' : ''}
        </span>
      </div>
      <div className="charts">
        {GAUGES.slice(0, 3).map((g) => (
          <GaugeCard key={g.metric} agentId={agent.id} chart={g} range={range} />
        ))}
        <InterfaceCard agentId={agent.id} range={range} />
        {GAUGES.slice(3).map((g) => (
          <GaugeCard key={g.metric} agentId={agent.id} chart={g} range={range} />
        ))}
      </div>
    </div>
  );
}

function GaugeCard({ agentId, chart, range }: { agentId: string; chart: GaugeChart; range: TimeRange }) {
  const resource = useSummaryChart(agentId, chart.metric, range);
  return (
    <ChartCard testId={`chart-${chart.metric}`} title={chart.title} unit={chart.unit} resource={resource} rangeKey={range.id} range={range} />
  );
}

/** Bit rates of one interface at a time (all of a firewall's at once would be unreadable); the busiest first. */
function InterfaceCard({ agentId, range }: { agentId: string; range: TimeRange }) {
  const query = useQuery();
  const interfaces = useInterfaces(agentId, range);
  const names = interfaces.data?.names ?? [];
  const wanted = query.get('interface');
  const chosen = wanted !== null && names.includes(wanted) ? wanted : interfaces.data?.busiest;
  const resource = useRatesChart(agentId, chosen, range);
  const picker =
    names.length > 1 ? (
      <select aria-label="Interface" value={chosen} onChange={(e) => setQuery({ interface: e.target.value })}>
        {names.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    ) : (
      chosen && <span className="mono">{chosen}</span>
    );
  if (interfaces.data && names.length === 0) {
    return (
      <section className="card chart-card" data-testid="chart-interface_bps">
        <h2>Interface traffic</h2>
        <Empty>This agent reports no interface counters.</Empty>
      </section>
    );
  }
  return (
    <ChartCard testId="chart-interface_bps" title="Interface traffic" unit="bits" resource={resource} rangeKey={`${range.id}/${chosen ?? ''}`} range={range} tools={picker} error={interfaces.error} />
  );
}

export interface ChartCardProps {
  testId: string;
  title: string;
  unit: Unit;
  resource: Resource<RangedChart>;
  /** The key the loaded data must carry to be shown (range, and interface where there is one). */
  rangeKey: string;
  range: TimeRange;
  tools?: ReactNode;
  error?: Error | undefined;
}

export function ChartCard({ testId, title, unit, resource, rangeKey, range, tools, error }: ChartCardProps) {
  const loaded = chartFor(resource, rangeKey);
  return (
    <section className="card chart-card" data-testid={testId} aria-busy={!loaded}>
      <div className="chart-card-head">
        <h2>{title}</h2>
        {tools}
      </div>
      <ErrorBanner error={error ?? resource.error} />
      {!loaded ? (
        !resource.error && <div className="chart-placeholder muted">Loading…</div>
      ) : isEmpty(loaded.chart) ? (
        <Empty>No samples in the {range.description}.</Empty>
      ) : (
        <TimeChart data={loaded.chart} window={loaded.window} unit={unit} title={title} description={range.description} />
      )}
    </section>
  );
}
