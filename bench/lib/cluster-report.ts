// cluster-capacity.ts's output: when a step counts as given out, the rows (bench/lib/table.ts), and the
// three markdown tables docs/sizing.md carries (the measured steps, the costs with their check against
// the steps, the model for 100,000 agents).
import { checkAgainstPoints, clusterModel, heartbeatCosts, heartbeatRate, PARTS, type ClusterModel, type HeartbeatCosts, type Part } from './cluster-model.js';
import type { ClusterWindow } from './cluster-window.js';
import type { BenchRow } from './table.js';

export interface ClusterSettings {
  steps: Array<{ sockets: number; intervalS: number }>;
  settleS: number;
  measureS: number;
  p99LimitMs: number;
  perFleet: number;
  headroom: number;
  /** The machine's cores: a step whose processes keep 90 % of them busy has used the machine up. */
  cores: number;
}

const MODEL_AGENTS = 100_000;
const INSTANCES = 3;
/** Metric tables' growth per agent per day on PostgreSQL, as capacity.ts measured it (docs/sizing.md: 498–507 KiB). */
const METRIC_BYTES_PER_AGENT_DAY = 500 * 1024;
/**
 * WAL per heartbeat when no window here was ours alone (the shared server's other databases wrote in
 * every one): capacity.ts's clean window at 2,000 agents on 2026-11-30 (run 4, docs/sizing.md), the
 * larger of its two clean figures. One instance or three write the same rows per heartbeat.
 */
const FALLBACK_WAL_BYTES_PER_HEARTBEAT = 10_149;
/** src/config/env.ts's default METRICS_RETENTION_DAYS. */
const RETENTION_DAYS = 90;
const GiB = 1024 ** 3;
const LABEL: Record<Part, string> = { instances: 'instances', postgres: 'PostgreSQL backends', haproxy: 'HAProxy', nats: 'nats-server', fleet: 'fleet simulator' };

const cores = (w: ClusterWindow, part: Part) => w.cpuMs[part] / w.seconds / 1000;
const ourCores = (w: ClusterWindow) => PARTS.reduce((t, p) => t + (Number.isFinite(w.cpuMs[p]) ? cores(w, p) : 0), 0);
const agentsAt60 = (w: { sockets: number; intervalS: number }) => Math.round((w.sockets * 60) / w.intervalS);
const thousands = (n: number) => Math.round(n).toLocaleString('en-US');
/** "N sockets at I s = heartbeat rate of M agents at 60 s". */
export const stepLabel = (w: { sockets: number; intervalS: number }): string =>
  w.intervalS === 60 ? `${thousands(w.sockets)} agents at 60 s` : `${thousands(w.sockets)} sockets at ${w.intervalS} s = heartbeats of ${thousands(agentsAt60(w))} agents at 60 s`;

/** Why the cluster gave out at this step, or undefined when it carried it. */
export function givenOut(w: ClusterWindow, s: ClusterSettings): string | undefined {
  const heaviest = PARTS.reduce((a, b) => (cores(w, b) > cores(w, a) ? b : a));
  const why = [
    w.p99Ms > s.p99LimitMs ? `answers' p99 ${w.p99Ms.toFixed(0)} ms > ${s.p99LimitMs} ms` : '',
    w.failed > 0.01 * (w.heartbeats + w.failed) ? `${w.failed} heartbeats failed` : '',
    w.connected < w.sockets ? `${w.sockets - w.connected} sockets lost` : '',
    ourCores(w) >= 0.9 * s.cores ? `the cluster's processes kept ${ourCores(w).toFixed(2)} of ${s.cores} cores busy` : '',
  ].filter(Boolean);
  const where = `the most CPU: ${LABEL[heaviest]}, ${cores(w, heaviest).toFixed(2)} cores; the machine ${w.machineBusyCores.toFixed(2)} of ${s.cores} busy, everyone's work`;
  return why.length ? `${stepLabel(w)}: ${why.join(', ')} (${where})` : undefined;
}

function stepNote(w: ClusterWindow): string {
  return (
    `sockets per instance ${Object.entries(w.socketsPerInstance).map(([k, v]) => `${k} ${v}`).join(', ')}; ` +
    `cores ${PARTS.map((p) => `${LABEL[p]} ${cores(w, p).toFixed(3)}`).join(', ')}; machine busy ${w.machineBusyCores.toFixed(2)} of its cores (everyone's), load ${w.loadAverage.toFixed(1)}; ` +
    `RSS ${w.rssMiBPerInstance.map((r) => r.toFixed(0)).join(' / ')} MiB; ` +
    `NATS ${(w.natsMsgs / w.seconds).toFixed(1)} msgs/s; WAL ${w.walBytes !== undefined ? `${(w.walBytes / w.heartbeats).toFixed(0)} bytes a heartbeat` : `not ours alone (${w.otherCommits} commits of other databases)`}; ` +
    `fleet's longest event-loop delay ${w.fleetLoopMaxMs.toFixed(0)} ms`
  );
}

/**
 * The costs and the model; `walMeasured` false when the WAL figure is capacity.ts's (no window here was
 * ours alone). The fit goes through the steps the cluster carried: in the one where it gave out, the
 * machine's cores were used up, so its processes got less CPU than the work needed and the step would
 * pull the per-heartbeat cost down (it is still checked against the fit).
 */
export function costsAndModel(windows: ClusterWindow[], s: ClusterSettings): { costs: HeartbeatCosts; model: ClusterModel; walMeasured: boolean; fitted: number } {
  const carried = windows.filter((w) => givenOut(w, s) === undefined);
  const fitted = carried.length >= 2 ? carried : windows;
  const measured = heartbeatCosts(fitted, INSTANCES);
  const walMeasured = Number.isFinite(measured.walBytesPerHeartbeat);
  const costs = walMeasured ? measured : { ...measured, walBytesPerHeartbeat: FALLBACK_WAL_BYTES_PER_HEARTBEAT };
  const model = clusterModel(costs, { agents: MODEL_AGENTS, intervalS: 60, headroom: s.headroom, metricBytesPerAgentDay: METRIC_BYTES_PER_AGENT_DAY, retentionDays: RETENTION_DAYS, minInstances: 2 });
  return { costs, model, walMeasured, fitted: fitted.length };
}

export function clusterRows(windows: ClusterWindow[], s: ClusterSettings, stoppedBy: string | undefined): BenchRow[] {
  const base = { benchmark: 'cluster-capacity', backend: 'postgres' };
  const rows: BenchRow[] = windows.map((w) => ({
    ...base,
    setting: stepLabel(w),
    figure: heartbeatRate(w),
    unit: 'heartbeats/s accepted',
    baseline: w.sockets / w.intervalS,
    baselineLabel: 'heartbeats/s the sockets send',
    better: 'higher',
    p50Ms: w.p50Ms,
    p99Ms: w.p99Ms,
    errors: w.failed,
    note: stepNote(w),
  }));
  if (windows.length === 0) return [{ ...base, setting: '–', figure: Number.NaN, unit: '–', baseline: Number.NaN, baselineLabel: '–', better: 'higher', note: `no step measured: ${stoppedBy ?? 'none given'}` }];
  const { costs, model, walMeasured, fitted } = costsAndModel(windows, s);
  const last = windows.at(-1)!;
  for (const part of PARTS) {
    const c = costs.cpu[part];
    const note = `${c.perSocket === undefined ? 'no socket term (the steps could not separate it)' : `${f(c.perSocket, 4)} cores per 1,000 sockets held`}; fixed ${f(c.fixed / 1000, 3)} cores`;
    rows.push({ ...base, setting: `per heartbeat, fit through ${fitted} steps`, figure: c.perUnit * 1000, unit: `µs CPU of ${LABEL[part]} a heartbeat`, baseline: (last.cpuMs[part] / last.heartbeats) * 1000, baselineLabel: 'µs, all of it ÷ heartbeats at the last step', better: 'lower', note });
  }
  for (const c of checkAgainstPoints(costs, windows)) {
    rows.push({ ...base, setting: `check: ${stepLabel(c.point)}`, figure: c.predicted, unit: 'cores predicted (all but the fleet)', baseline: c.measured, baselineLabel: 'cores measured', better: 'lower' });
  }
  const m = (unit: string, figure: number) => ({ ...base, setting: `model: ${thousands(MODEL_AGENTS)} agents at 60 s`, figure, unit, baseline: Number.NaN, baselineLabel: '–', better: 'lower' as const });
  rows.push(
    { ...m(`instances (each ≤ ${s.headroom} of a core busy)`, model.instances), note: `${model.heartbeatsPerS.toFixed(0)} heartbeats/s; extrapolated from the fit through the measured steps. ${stoppedBy ? `Gave out: ${stoppedBy}.` : 'Did not give out within the steps.'}` },
    m('cores of PostgreSQL backends busy', model.postgresCores),
    m('cores of HAProxy busy', model.haproxyCores),
    m('NATS msgs/s', model.natsMsgsPerS),
    { ...m('GiB WAL a day', model.walBytesPerDay / GiB), note: walMeasured ? 'WAL per heartbeat from the windows no other database wrote in' : `no window here was ours alone: ${FALLBACK_WAL_BYTES_PER_HEARTBEAT} bytes a heartbeat, capacity.ts's clean window (docs/sizing.md)` },
    m('GiB metrics a day', model.metricBytesPerDay / GiB),
    m('GiB RSS of the instances', model.instanceRssBytes / GiB),
  );
  return rows;
}

const f = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

export function clusterMarkdown(windows: ClusterWindow[], idleRss: number[], s: ClusterSettings, stoppedBy: string | undefined): string {
  if (windows.length === 0) return `No step measured: ${stoppedBy ?? 'none given'}.`;
  const measured = [
    '| step | sockets per instance | heartbeats/s | p50 / p99 ms | failed | instances | PostgreSQL | HAProxy | NATS | fleet | machine busy | RSS per instance MiB | NATS msgs/s | WAL per heartbeat |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...windows.map((w) =>
      `| ${stepLabel(w)} | ${Object.values(w.socketsPerInstance).join(' / ')} | ${f(heartbeatRate(w), 1)} | ${f(w.p50Ms, 0)} / ${f(w.p99Ms, 0)} | ${w.failed} | ` +
      `${PARTS.map((p) => f(cores(w, p))).join(' | ')} | ${f(w.machineBusyCores)} | ${w.rssMiBPerInstance.map((r) => r.toFixed(0)).join(' / ')} | ${f(w.natsMsgs / w.seconds, 1)} | ` +
      `${w.walBytes !== undefined ? `${(w.walBytes / w.heartbeats / 1024).toFixed(1)} KiB` : 'shared'} |`,
    ),
  ];
  const { costs, model, walMeasured, fitted } = costsAndModel(windows, s);
  const perHeartbeat = [
    '| part | CPU per heartbeat | per 1,000 sockets held | fixed |',
    '|---|---:|---:|---:|',
    ...PARTS.map((p) => `| ${LABEL[p]} | ${f(costs.cpu[p].perUnit * 1000, 0)} µs | ${costs.cpu[p].perSocket === undefined ? 'in the heartbeat\'s' : `${f(costs.cpu[p].perSocket!, 4)} cores`} | ${f(costs.cpu[p].fixed / 1000, 3)} cores |`),
    `| NATS messages | ${f(costs.natsMsgs.perUnit, 3)} a heartbeat | | ${f(costs.natsMsgs.fixed, 1)} a second |`,
    `| WAL | ${f(costs.walBytesPerHeartbeat / 1024, 1)} KiB a heartbeat${walMeasured ? '' : ' (not measured here: capacity.ts\'s clean window)'} | | |`,
    `| RSS of the instances | | ${f((costs.rss.perUnit * 1000) / 2 ** 20, 1)} MiB | ${f(costs.rss.fixed / INSTANCES / 2 ** 20, 0)} MiB an instance (5 s after start, before any agent: ${idleRss.map((r) => r.toFixed(0)).join(' / ')}) |`,
  ];
  const check = ['| step | cores predicted | cores measured |', '|---|---:|---:|', ...checkAgainstPoints(costs, windows).map((c) => `| ${stepLabel(c.point)} | ${f(c.predicted)} | ${f(c.measured)} |`)];
  const modelTable = [
    `| ${thousands(MODEL_AGENTS)} agents at one heartbeat a minute | |`,
    '|---|---:|',
    `| heartbeats/s | ${f(model.heartbeatsPerS, 0)} |`,
    `| instances (≤ ${s.headroom} of a core each) | ${model.instances} (${f(model.instanceCores)} cores busy) |`,
    `| PostgreSQL cores (backends only, ≤ ${s.headroom} busy) | ${model.provisioned.postgres} (${f(model.postgresCores)} busy) |`,
    `| HAProxy cores | ${model.provisioned.haproxy} (${f(model.haproxyCores)} busy) |`,
    `| nats-server | ${f(model.natsMsgsPerS, 0)} msgs/s (${f(model.natsCores, 3)} cores) |`,
    `| WAL a day | ${f(model.walBytesPerDay / GiB, 0)} GiB |`,
    `| metrics a day / held at ${RETENTION_DAYS} days | ${f(model.metricBytesPerDay / GiB, 1)} GiB / ${f(model.metricBytesHeld / 1024 ** 4, 2)} TiB |`,
    `| RSS of the instances | ${f(model.instanceRssBytes / GiB, 1)} GiB |`,
  ];
  return [
    `Steps (${s.measureS} s windows after ${s.settleS} s settling; CPU in cores):`,
    '',
    ...measured,
    '',
    stoppedBy ? `Gave out: ${stoppedBy}.` : 'Did not give out within the steps.',
    '',
    `Costs (least squares through the ${fitted} steps carried: CPU a second = fixed + per heartbeat × heartbeats/s + per socket × sockets):`,
    '',
    ...perHeartbeat,
    '',
    'Check: each step\'s CPU (all but the fleet) as the fit predicts it:',
    '',
    ...check,
    '',
    'Model (extrapolated from the fit):',
    '',
    ...modelTable,
  ].join('\n');
}
