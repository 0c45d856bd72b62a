// One check of an agent, chosen in its Checks tab: its state changes (newest first, paged), a chart
// per perfdata item of its latest result (the metric series `check_perf` labelled `<check id>/<label>`,
// drawn by the Metrics tab's chart card) and, for users who may change things, its override.
import { ChartCard } from '../agent-detail/metrics/metrics-tab';
import type { Unit } from '../agent-detail/metrics/chart-theme';
import { useSummaryChart } from '../agent-detail/metrics/metric-queries';
import { DEFAULT_RANGE } from '../agent-detail/metrics/ranges';
import { Allowed } from '../auth/access';
import { formatDateTime } from '../ui/format';
import { Empty, ErrorBanner, Loading, LoadMore } from '../ui/widgets';
import { usePagedList } from '../use-paged-list';
import { CheckStateBadge } from './check-state-badge';
import type { AgentCheck, CheckHistoryEntry, CheckOverride } from './check-types';
import { OverrideForm } from './override-form';

const HISTORY_PAGE = 20;
const REFRESH_MS = 30_000;

/** The server keeps perfdata in base units (perfdata-units.ts): seconds, bytes, or the plugin's own. */
function unitOf(uom: string): Unit {
  const u = uom.toLowerCase();
  if (u === 's' || u === 'ms' || u === 'us') return 'seconds';
  if (['b', 'kb', 'mb', 'gb', 'tb'].includes(u)) return 'bytes';
  return u === '%' ? 'percent' : 'plain';
}

interface Props {
  agentId: string;
  check: AgentCheck;
  override: CheckOverride | undefined;
  /** The override form starts from the stored override: it waits for the list rather than start empty. */
  overridesLoaded: boolean;
  onChanged: () => void;
}

export function CheckDetail({ agentId, check, override, overridesLoaded, onChanged }: Props) {
  return (
    <section className="check-detail" aria-label={`Check ${check.name}`} data-testid="check-detail">
      <h2>{check.name}</h2>
      <div className="check-detail-grid">
        <CheckHistory agentId={agentId} checkId={check.id} />
        <Allowed need="write">
          {overridesLoaded ? <OverrideForm key={override?.updated_at ?? 'none'} agentId={agentId} check={check} override={override} onChanged={onChanged} /> : <Loading />}
        </Allowed>
      </div>
      {check.perfdata.length > 0 && (
        <div className="charts">
          {check.perfdata.map((p) => (
            <PerfdataChart key={p.label} agentId={agentId} checkId={check.id} label={p.label} unit={unitOf(p.uom)} />
          ))}
        </div>
      )}
    </section>
  );
}

function CheckHistory({ agentId, checkId }: { agentId: string; checkId: string }) {
  const path = `/agents/${encodeURIComponent(agentId)}/checks/${encodeURIComponent(checkId)}/history`;
  // History entries have no id: a change is told apart by its time and state.
  const history = usePagedList<CheckHistoryEntry>(path, {}, { pageSize: HISTORY_PAGE, refreshMs: REFRESH_MS, keyOf: (h) => `${h.at}/${h.state}` });
  return (
    <section className="card" aria-label="State history">
      <h3>State history</h3>
      <ErrorBanner error={history.error} />
      {!history.items ? (
        !history.error && <Loading />
      ) : history.items.length === 0 ? (
        <Empty>No result yet.</Empty>
      ) : (
        <ol className="check-history" data-testid="check-history">
          {history.items.map((h) => (
            <li key={`${h.at}/${h.state}`}>
              <CheckStateBadge state={h.state} /> <time dateTime={h.at}>{formatDateTime(h.at)}</time>
              <div className="check-output">{h.output}</div>
            </li>
          ))}
        </ol>
      )}
      <LoadMore list={history} />
    </section>
  );
}

function PerfdataChart({ agentId, checkId, label, unit }: { agentId: string; checkId: string; label: string; unit: Unit }) {
  const range = DEFAULT_RANGE;
  const resource = useSummaryChart(agentId, 'check_perf', range, `${checkId}/${label}`);
  return <ChartCard testId={`check-perf-${label}`} title={label} unit={unit} resource={resource} rangeKey={range.id} range={range} />;
}
