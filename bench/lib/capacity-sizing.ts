// The sizing arithmetic of capacity.ts, apart from any measuring so it can be tested: from what one
// backend cost at two fleet sizes, the cost of one more agent (the slope between the two points, so the
// server's fixed costs do not count against each agent) and the fixed base, then agents per core, per
// GiB, and disk, WAL and traffic per agent per day.

const DAY_S = 86_400;
const GiB = 1024 ** 3;

/** What one steady window at one fleet size cost (differences over the window, except the memory). */
export interface CapacityPoint {
  agents: number;
  seconds: number;
  /** The server process's CPU (user + system) in the window. */
  serverCpuMs: number;
  /** PostgreSQL's backends' CPU in the window; undefined on PGlite (inside the server's) or when unreadable. */
  databaseCpuMs?: number;
  heartbeats: number;
  /** Resident memory over the window (capacity.ts: the median of its reads), V8 heap at its end; no forced collection. */
  rssBytes: number;
  heapBytes: number;
  bytesIn: number;
  bytesOut: number;
  metricBytes: number;
  samples: number;
  walBytes: number;
  /** Something else wrote WAL in the window (other databases of a shared PostgreSQL): its walBytes are not the fleet's alone. */
  walShared?: boolean;
}

/** A per-agent cost and the fixed part, from a straight line through two points. */
export interface Line {
  perAgent: number;
  fixed: number;
  /** True when the slope was not positive (noise larger than the difference): perAgent is then all ÷ agents at the larger point. */
  fallback: boolean;
}

export function lineThrough(a: { x: number; y: number }, b: { x: number; y: number }): Line {
  const slope = (b.y - a.y) / (b.x - a.x);
  if (Number.isFinite(slope) && slope > 0) return { perAgent: slope, fixed: a.y - slope * a.x, fallback: false };
  return { perAgent: b.y / b.x, fixed: 0, fallback: true };
}

export interface SizingAssumptions {
  /** The share of a core the server (and its database) may use at the sized fleet, e.g. 0.5. */
  headroom: number;
  heartbeatIntervalS: number;
  /** Stored bytes of one configuration backup, backups a firewall stores a day, and firewalls' share of the fleet. */
  backupBytes: number;
  backupsPerDay: number;
  firewallShare: number;
}

export interface Sizing {
  /** Cores (CPU-seconds per second) one more agent costs: the server, and PostgreSQL's backends (0 on PGlite). */
  serverCoresPerAgent: Line;
  databaseCoresPerAgent: Line | undefined;
  rssBytesPerAgent: Line;
  heapBytesPerAgent: Line;
  agentsPerCore: number;
  agentsPerGiB: number;
  metricBytesPerAgentDay: number;
  walBytesPerAgentDay: number;
  backupBytesPerAgentDay: number;
  networkBytesPerAgentDay: number;
  /** Per heartbeat, over both windows: server and database CPU µs, WAL bytes, metric bytes, samples, bytes in. */
  perHeartbeat: { serverCpuUs: number; databaseCpuUs: number | undefined; walBytes: number; metricBytes: number; samples: number; bytesIn: number };
  /** How many windows the WAL figure comes from: those nobody else wrote in, or both (and NaN WAL) when none was clean. */
  walWindows: number;
}

const cores = (ms: number, seconds: number) => ms / 1000 / seconds;

export function sizing(small: CapacityPoint, large: CapacityPoint, a: SizingAssumptions): Sizing {
  const line = (of: (p: CapacityPoint) => number) => lineThrough({ x: small.agents, y: of(small) }, { x: large.agents, y: of(large) });
  const serverCoresPerAgent = line((p) => cores(p.serverCpuMs, p.seconds));
  const hasDatabase = small.databaseCpuMs !== undefined && large.databaseCpuMs !== undefined;
  const databaseCoresPerAgent = hasDatabase ? line((p) => cores(p.databaseCpuMs!, p.seconds)) : undefined;
  const rssBytesPerAgent = line((p) => p.rssBytes);
  const heapBytesPerAgent = line((p) => p.heapBytes);
  const heartbeats = small.heartbeats + large.heartbeats;
  const sum = (of: (p: CapacityPoint) => number) => of(small) + of(large);
  const heartbeatsPerAgentDay = DAY_S / a.heartbeatIntervalS;
  const per = (of: (p: CapacityPoint) => number) => sum(of) / heartbeats;
  // WAL from the windows only the fleet wrote in: on a shared PostgreSQL another database's burst (its
  // CREATE DATABASE checkpoints) once put 450 MiB into one window (bench/history/2026-11-30.md).
  const clean = [small, large].filter((p) => !p.walShared);
  const perHeartbeat = {
    serverCpuUs: per((p) => p.serverCpuMs) * 1000,
    databaseCpuUs: hasDatabase ? per((p) => p.databaseCpuMs!) * 1000 : undefined,
    walBytes: clean.length > 0 ? clean.reduce((n, p) => n + p.walBytes, 0) / clean.reduce((n, p) => n + p.heartbeats, 0) : Number.NaN,
    metricBytes: per((p) => p.metricBytes),
    samples: per((p) => p.samples),
    bytesIn: per((p) => p.bytesIn),
  };
  // Traffic includes what is not a heartbeat (WebSocket pings, upgrades), so per agent-second, not per heartbeat.
  const agentSeconds = sum((p) => p.agents * p.seconds);
  return {
    serverCoresPerAgent,
    databaseCoresPerAgent,
    rssBytesPerAgent,
    heapBytesPerAgent,
    agentsPerCore: a.headroom / (serverCoresPerAgent.perAgent + (databaseCoresPerAgent?.perAgent ?? 0)),
    agentsPerGiB: GiB / rssBytesPerAgent.perAgent,
    metricBytesPerAgentDay: perHeartbeat.metricBytes * heartbeatsPerAgentDay,
    walBytesPerAgentDay: perHeartbeat.walBytes * heartbeatsPerAgentDay,
    backupBytesPerAgentDay: a.backupBytes * a.backupsPerDay * a.firewallShare,
    networkBytesPerAgentDay: (sum((p) => p.bytesIn + p.bytesOut) / agentSeconds) * DAY_S,
    perHeartbeat,
    walWindows: clean.length,
  };
}

/**
 * What a deployment of `agents` needs by these figures: cores at the headroom, RAM for the server
 * process, disk written a day (metrics and backups), the metrics held once `retentionDays` of them are
 * kept (compaction after a week changes a sample's size little: bench/metrics-storage.ts), and WAL a day.
 */
export function deployment(
  s: Sizing,
  agents: number,
  headroom: number,
  retentionDays: number,
): { cores: number; ramGiB: number; diskGiBPerDay: number; metricsGiBKept: number; walGiBPerDay: number } {
  const fixedCores = s.serverCoresPerAgent.fixed + (s.databaseCoresPerAgent?.fixed ?? 0);
  const perAgent = s.serverCoresPerAgent.perAgent + (s.databaseCoresPerAgent?.perAgent ?? 0);
  return {
    cores: (Math.max(0, fixedCores) + perAgent * agents) / headroom,
    ramGiB: (Math.max(0, s.rssBytesPerAgent.fixed) + s.rssBytesPerAgent.perAgent * agents) / GiB,
    diskGiBPerDay: ((s.metricBytesPerAgentDay + s.backupBytesPerAgentDay) * agents) / GiB,
    metricsGiBKept: (s.metricBytesPerAgentDay * retentionDays * agents) / GiB,
    walGiBPerDay: (s.walBytesPerAgentDay * agents) / GiB,
  };
}
