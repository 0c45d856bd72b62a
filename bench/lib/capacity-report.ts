// capacity.ts's output: the bench's rows (bench/lib/table.ts) and the sizing table as markdown, the one
// docs/sizing.md carries, with the machine and the commit it was measured on.
import { execFile } from 'node:child_process';
import os from 'node:os';
import { promisify } from 'node:util';
import { deployment, sizing, type Line, type Sizing } from './capacity-sizing.js';
import type { WindowFigures } from './capacity-window.js';
import type { Backend } from './databases.js';
import type { BenchRow, Target } from './table.js';

export interface CapacitySettings {
  steps: [number, number];
  intervalS: number;
  settleS: number;
  measureS: number;
  headroom: number;
  backupsPerDay: number;
}

export interface BackendResult {
  backend: Backend;
  /** The server's resident memory and V8 heap + external (bytes) a second after it listened, before the first agent. */
  before?: { rss: number; heapBytes: number };
  windows: WindowFigures[];
  startFailed: number;
  /** One configuration backup as stored: the table's growth per backup, the compressed column, the raw bytes. */
  backup?: { perBackup: number; column: number; raw: number };
  failure?: string;
}

/** Firewalls' share of the fleet (src/fleet DEFAULT_MIX): only firewalls have configuration backups. */
const FIREWALL_SHARE = 0.4;
/** Tactical RMM documents "1 core < 200 agents"; the bar a row of agents per core is marked against. */
const TARGET_AGENTS_PER_CORE: Target = { op: '≥', value: 200, of: 'figure' };
/** src/config/env.ts's default METRICS_RETENTION_DAYS: how many days of metrics the deployment rows keep. */
const METRICS_RETENTION_DAYS = 90;
const KiB = 1024;
const MiB = KiB * KiB;

export function sizingOf(r: BackendResult, s: CapacitySettings): Sizing {
  const [small, large] = r.windows as [WindowFigures, WindowFigures];
  return sizing(small, large, { headroom: s.headroom, heartbeatIntervalS: s.intervalS, backupBytes: r.backup?.perBackup ?? Number.NaN, backupsPerDay: s.backupsPerDay, firewallShare: FIREWALL_SHARE });
}

const errorsOf = (r: BackendResult) => r.startFailed + r.windows.reduce((n, w) => n + w.failed, 0);
const pct1000 = (coresPerAgent: number) => coresPerAgent * 1000 * 100;
const lineNote = (l: Line, unit: string, fixed: string) =>
  l.fallback ? 'the second step cost no more than the first (noise): the figure is all ÷ agents at the larger step' : `fixed part ${fixed} ${unit}`;

export function failureRow(r: BackendResult, s: CapacitySettings): BenchRow {
  return {
    benchmark: 'capacity',
    backend: r.backend,
    setting: `${s.steps.join(' → ')} agents`,
    figure: Number.NaN,
    unit: 'agents/core',
    baseline: Number.NaN,
    baselineLabel: 'all ÷ agents at the larger step',
    better: 'higher',
    target: TARGET_AGENTS_PER_CORE,
    errors: errorsOf(r),
    note: `FAILED: ${r.failure ?? 'fewer than two windows measured'}`,
  };
}

export function capacityRows(r: BackendResult, s: CapacitySettings): BenchRow[] {
  const z = sizingOf(r, s);
  const large = r.windows[1]!;
  const setting = (what: string) => `${s.steps.join(' → ')} agents, 1 heartbeat/${s.intervalS} s, ${what}`;
  const base = { benchmark: 'capacity', backend: r.backend, errors: errorsOf(r) };
  const plainCores = (w: WindowFigures) => (w.serverCpuMs + (w.databaseCpuMs ?? 0)) / 1000 / w.seconds / w.agents;
  const before = r.before ? r.before.rss : Number.NaN;
  const beforeHeap = r.before ? r.before.heapBytes : Number.NaN;
  const windowsNote = r.windows
    .map((w) => `${w.agents} agents: ${w.heartbeats} heartbeats in ${w.seconds.toFixed(0)} s, ${w.failed} failed, p99 ${w.serverP99Ms.toFixed(1)} ms in the server (estimated from its histogram's buckets; ${w.agentP99Ms.toFixed(1)} as the agents see it, through the relay)`)
    .join('; ');
  const rows: BenchRow[] = [
    {
      ...base,
      setting: setting('server CPU per agent'),
      figure: pct1000(z.serverCoresPerAgent.perAgent),
      unit: '% of a core /1,000 agents',
      baseline: pct1000(large.serverCpuMs / 1000 / large.seconds / large.agents),
      baselineLabel: 'all ÷ agents at the larger step',
      better: 'lower',
      note:
        `slope between the steps; ${lineNote(z.serverCoresPerAgent, '% of a core', (z.serverCoresPerAgent.fixed * 100).toFixed(1))}; ${z.perHeartbeat.serverCpuUs.toFixed(0)} µs of server CPU per heartbeat (all ÷ heartbeats, both windows)` +
        `${r.backend === 'pglite' ? '; PGlite runs inside the server process, so its database work is in this figure' : ''}. ${windowsNote}.`,
    },
  ];
  if (z.databaseCoresPerAgent) {
    rows.push({
      ...base,
      setting: setting('PostgreSQL backends CPU per agent'),
      figure: pct1000(z.databaseCoresPerAgent.perAgent),
      unit: '% of a core /1,000 agents',
      baseline: pct1000((large.databaseCpuMs ?? Number.NaN) / 1000 / large.seconds / large.agents),
      baselineLabel: 'all ÷ agents at the larger step',
      better: 'lower',
      note: `the backends connected to the bench's database, from /proc (autovacuum, checkpointer and WAL writer not included); ${lineNote(z.databaseCoresPerAgent, '% of a core', (z.databaseCoresPerAgent.fixed * 100).toFixed(1))}; ${z.perHeartbeat.databaseCpuUs?.toFixed(0)} µs per heartbeat`,
    });
  }
  rows.push(
    {
      ...base,
      setting: setting(`agents per core at ≤ ${s.headroom * 100} % of it`),
      figure: z.agentsPerCore,
      unit: 'agents/core',
      baseline: s.headroom / plainCores(large),
      baselineLabel: 'from all CPU ÷ agents at the larger step',
      better: 'higher',
      target: TARGET_AGENTS_PER_CORE,
      note: `server${z.databaseCoresPerAgent ? ' + PostgreSQL backends' : ' (the embedded database inside it)'} per agent; the target is Tactical RMM's documented 200 agents a core`,
    },
    {
      ...base,
      setting: setting('resident memory per agent'),
      figure: z.rssBytesPerAgent.perAgent / KiB,
      unit: 'KiB/agent',
      baseline: large.rssBytes / large.agents / KiB,
      baselineLabel: 'all RSS ÷ agents at the larger step',
      better: 'lower',
      note:
        `the built server's, the median of /proc reads every 2 s over each window (${r.windows.map((w) => `${w.agents} agents ${(w.rssRange[0] / MiB).toFixed(0)}–${(w.rssRange[1] / MiB).toFixed(0)} MiB`).join(', ')}; no forced collection); ${lineNote(z.rssBytesPerAgent, 'MiB', (z.rssBytesPerAgent.fixed / MiB).toFixed(0))}; ` +
        `RSS before the first agent ${(before / MiB).toFixed(0)} MiB (start-up's migrations leave pages the process gives back later, so no baseline is taken from it); PostgreSQL's own memory not included`,
    },
    {
      ...base,
      setting: setting('V8 heap + external per agent'),
      figure: z.heapBytesPerAgent.perAgent / KiB,
      unit: 'KiB/agent',
      baseline: (large.heapBytes - beforeHeap) / large.agents / KiB,
      baselineLabel: '(heap − heap before agents) ÷ agents',
      better: 'lower',
      note: `from the server's Prometheus endpoint at the end of each window, as it stands: the built server runs without --expose-gc, so no full collection first and garbage not yet collected counts; ${lineNote(z.heapBytesPerAgent, 'MiB', (z.heapBytesPerAgent.fixed / MiB).toFixed(1))}`,
    },
    {
      ...base,
      setting: setting('agents per GiB of RAM'),
      figure: z.agentsPerGiB,
      unit: 'agents/GiB',
      baseline: (1024 * MiB) / (large.rssBytes / large.agents),
      baselineLabel: 'from all RSS ÷ agents at the larger step',
      better: 'higher',
      note: `the server process's resident memory per agent; add the fixed ${(Math.max(0, z.rssBytesPerAgent.fixed) / MiB).toFixed(0)} MiB`,
    },
    {
      ...base,
      setting: setting('WAL per heartbeat'),
      figure: z.perHeartbeat.walBytes,
      unit: 'bytes/heartbeat',
      baseline: z.perHeartbeat.bytesIn,
      baselineLabel: 'bytes received per heartbeat',
      better: 'lower',
      note:
        `pg_current_wal_lsn ÷ heartbeats over ${z.walWindows === 2 ? 'both windows' : z.walWindows === 1 ? 'the window nothing else wrote in' : 'no window: other databases wrote in both'}; ${(z.walBytesPerAgentDay / MiB).toFixed(1)} MiB per agent per day; ` +
        `each window: ${r.windows.map((w) => `${w.agents} agents ${(w.walBytes / w.heartbeats).toFixed(0)} bytes/heartbeat, ${w.checkpoints} checkpoints begun${r.backend === 'postgres' ? ` (other databases committed ${w.otherCommits} transactions meanwhile)` : ''}`).join(', ')}` +
        `${r.backend === 'postgres' ? "; it is the cluster's WAL, so other databases' writes are in it" : ' (PGlite: its own WAL alone, read from pg_wal; checkpoints from pg_control, at most one a window)'}; ` +
        'after a checkpoint the first change to each page logs the whole page, so a window just after one writes more',
    },
    {
      ...base,
      setting: setting('metrics disk per agent per day'),
      figure: z.metricBytesPerAgentDay / KiB,
      unit: 'KiB/agent/day',
      baseline: (z.perHeartbeat.samples * 8 * (86_400 / s.intervalS)) / KiB,
      baselineLabel: 'the samples as bare float8s',
      better: 'lower',
      note:
        `growth of the metric tables (with indexes) ÷ heartbeats × heartbeats a day, recent form before compaction; ${z.perHeartbeat.samples.toFixed(1)} samples per heartbeat${r.backend === 'pglite' ? ' (all stored ÷ all heartbeats, counted once the server stopped)' : ''}, ${(z.perHeartbeat.metricBytes / z.perHeartbeat.samples).toFixed(1)} bytes each; ` +
        `kept ${METRICS_RETENTION_DAYS} days by default (METRICS_RETENTION_DAYS). The whole database grew ${r.windows.map((w) => `${((w.databaseGrowthBytes / w.heartbeats) * (86_400 / s.intervalS) / KiB).toFixed(0)} KiB/agent/day at ${w.agents} agents`).join(', ')} (page-sized steps; agent rows are rewritten in place)`,
    },
    {
      ...base,
      setting: setting(`config backups per agent per day (${s.backupsPerDay}/day, every one changed)`),
      figure: z.backupBytesPerAgentDay / KiB,
      unit: 'KiB/agent/day',
      baseline: ((r.backup?.raw ?? Number.NaN) * s.backupsPerDay * FIREWALL_SHARE) / KiB,
      baselineLabel: 'the raw config.xml bytes',
      better: 'lower',
      note: `the shared fixture's config.xml (${r.backup?.raw} bytes) stored 200 times over the fleet's firewalls: ${r.backup?.perBackup.toFixed(0)} bytes each (the table's growth over the second 100, indexes and TOAST included) (compressed content ${r.backup?.column}); firewalls are ${FIREWALL_SHARE * 100} % of the fleet; an unchanged configuration stores nothing (deduplicated by SHA-256)`,
    },
    {
      ...base,
      setting: setting('network per agent per day'),
      figure: z.networkBytesPerAgentDay / MiB,
      unit: 'MiB/agent/day',
      baseline: ((large.bytesIn / large.agents / large.seconds) * 86_400) / MiB,
      baselineLabel: 'bytes in alone (larger step)',
      better: 'lower',
      note: 'in + out of the agents\' connections, counted at a relay in front of the server (HTTP headers and bodies, WebSocket frames and pings), no TLS or TCP/IP headers',
    },
  );
  return rows;
}

/** The commit measured, read when the run starts: committing during a run must not change what it names. */
export async function commitOf(): Promise<string> {
  const git = promisify(execFile);
  try {
    const head = (await git('git', ['rev-parse', '--short', 'HEAD'])).stdout.trim();
    const dirty = (await git('git', ['status', '--porcelain', '--untracked-files=no'])).stdout.trim() !== '';
    return `${head}${dirty ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown';
  }
}

/** On PostgreSQL the WAL position is the cluster's: how many transactions other databases committed in the windows. */
const othersWrote = (r: BackendResult) => (r.backend === 'postgres' ? r.windows.reduce((n, w) => n + w.otherCommits, 0) : 0);
/** WAL a day, saying when other databases' writes kept a window out of it. */
function walCell(z: Sizing, otherCommits: number): string {
  if (z.walWindows === 0) return `– (other databases committed ${otherCommits} transactions in both windows)`;
  const mib = `${(z.walBytesPerAgentDay / MiB).toFixed(1)} MiB`;
  return z.walWindows === 1 ? `${mib} (from one window: other databases wrote in the other)` : mib;
}
const n0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const n1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');

export function sizingMarkdown(results: BackendResult[], s: CapacitySettings, commit: string): string {
  const cpu = os.cpus();
  const machine = `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.versions.node}`;
  const lines = [
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${machine}; code ${commit}; ${s.steps.join(' and ')} agents, one heartbeat every ${s.intervalS} s, ${s.measureS} s windows.`,
    '',
    `| backend | agents per core (≤ ${s.headroom * 100} % busy) | agents per GiB | server CPU per 1,000 agents | database CPU per 1,000 agents | fixed RSS | metrics per agent per day | backups per agent per day | WAL per agent per day | network per agent per day |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    if (r.failure || r.windows.length < 2) {
      lines.push(`| ${r.backend} | failed: ${r.failure ?? 'fewer than two windows'} | | | | | | | | |`);
      continue;
    }
    const z = sizingOf(r, s);
    lines.push(
      `| ${r.backend} | ${n0(z.agentsPerCore)} | ${n0(z.agentsPerGiB)} | ${n1(pct1000(z.serverCoresPerAgent.perAgent))} % of a core | ` +
        `${z.databaseCoresPerAgent ? `${n1(pct1000(z.databaseCoresPerAgent.perAgent))} %` : 'in the server’s'} | ${n0(Math.max(0, z.rssBytesPerAgent.fixed) / MiB)} MiB | ` +
        `${n0(z.metricBytesPerAgentDay / KiB)} KiB | ${n1(z.backupBytesPerAgentDay / KiB)} KiB | ${walCell(z, othersWrote(r))} | ${n1(z.networkBytesPerAgentDay / MiB)} MiB |`,
    );
  }
  lines.push(
    '',
    `| backend | agents | cores (≤ ${s.headroom * 100} % busy) | RAM for the server process | disk written a day (metrics + backups) | metrics kept (${METRICS_RETENTION_DAYS} days) | WAL a day |`,
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of results) {
    if (r.failure || r.windows.length < 2) continue;
    const z = sizingOf(r, s);
    for (const agents of [200, 2_000, 10_000]) {
      const d = deployment(z, agents, s.headroom, METRICS_RETENTION_DAYS);
      lines.push(`| ${r.backend} | ${n0(agents)} | ${d.cores.toFixed(2)} | ${d.ramGiB.toFixed(2)} GiB | ${d.diskGiBPerDay.toFixed(2)} GiB | ${n0(d.metricsGiBKept)} GiB | ${n1(d.walGiBPerDay)} GiB |`);
    }
  }
  return lines.join('\n');
}
