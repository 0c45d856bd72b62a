// The arithmetic of cluster-capacity.ts, apart from any measuring so it can be tested: from the steps
// measured on this machine (three instances, PostgreSQL, HAProxy, NATS, the fleet), what one heartbeat
// and one held socket cost each part (least squares through the steps: CPU a second = fixed + per
// heartbeat × heartbeats/s + per socket × sockets), the same fit's prediction for each measured step
// (the check), and the model for a large fleet. Steps at one interval alone cannot tell a heartbeat's
// cost from a socket's (their heartbeats are their sockets ÷ 60); steps at shorter intervals can.

const DAY_S = 86_400;

/** The parts whose CPU the bench reads from /proc. */
export const PARTS = ['instances', 'postgres', 'haproxy', 'nats', 'fleet'] as const;
export type Part = (typeof PARTS)[number];

/** One measured window at one step (differences over the window, except the memory). */
export interface ClusterPoint {
  sockets: number;
  intervalS: number;
  seconds: number;
  /** Heartbeats the fleet saw accepted in the window. */
  heartbeats: number;
  /** CPU (user + system) of each part in the window; the instances summed. */
  cpuMs: Record<Part, number>;
  /** NATS messages in + out in the window (the server's counters). */
  natsMsgs: number;
  /** WAL written in the window; undefined when another database wrote in it too (then it is not ours alone). */
  walBytes?: number;
  /** The instances' resident memory summed, at the end of the window. */
  instanceRssBytes: number;
}

/** y = fixed + perUnit × x (+ perSocket × sockets, for CPU). */
export interface Line {
  perUnit: number;
  fixed: number;
  perSocket?: number;
}

/**
 * Least squares through the points. With one point, or a slope that is not positive (noise larger than
 * the spread), the line through the origin and the points' totals: all of it charged per unit.
 */
export function fitLine(points: ReadonlyArray<{ x: number; y: number }>): Line {
  const n = points.length;
  const sx = points.reduce((t, p) => t + p.x, 0);
  const sy = points.reduce((t, p) => t + p.y, 0);
  const sxx = points.reduce((t, p) => t + p.x * p.x, 0);
  const sxy = points.reduce((t, p) => t + p.x * p.y, 0);
  const slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  if (n >= 2 && Number.isFinite(slope) && slope > 0) return { perUnit: slope, fixed: (sy - slope * sx) / n };
  return { perUnit: sx > 0 ? sy / sx : Number.NaN, fixed: 0 };
}

/**
 * Least squares for y = fixed + perUnit × x + perSocket × s. Falls back to fitLine on x alone (no socket
 * term) when the points cannot separate the two (fewer than three, x and s in proportion) or noise
 * makes either slope negative.
 */
export function fitPlane(points: ReadonlyArray<{ x: number; s: number; y: number }>): Line {
  const line = () => fitLine(points);
  if (points.length < 3) return line();
  const n = points.length;
  const mean = (f: (p: (typeof points)[number]) => number) => points.reduce((t, p) => t + f(p), 0) / n;
  const [mx, ms, my] = [mean((p) => p.x), mean((p) => p.s), mean((p) => p.y)];
  const cov = (f: (p: (typeof points)[number]) => number, g: (p: (typeof points)[number]) => number) => points.reduce((t, p) => t + f(p) * g(p), 0);
  const dx = (p: (typeof points)[number]) => p.x - mx;
  const ds = (p: (typeof points)[number]) => p.s - ms;
  const dy = (p: (typeof points)[number]) => p.y - my;
  const [xx, ss, xs, xy, sy] = [cov(dx, dx), cov(ds, ds), cov(dx, ds), cov(dx, dy), cov(ds, dy)];
  const det = xx * ss - xs * xs;
  // Nearly proportional x and s (all steps at one interval): nothing to separate them by.
  if (!(Math.abs(det) > 1e-9 * xx * ss)) return line();
  const perUnit = (xy * ss - sy * xs) / det;
  const perSocket = (sy * xx - xy * xs) / det;
  if (!(perUnit > 0) || perSocket < 0) return line();
  return { perUnit, perSocket, fixed: my - perUnit * mx - perSocket * ms };
}

export interface HeartbeatCosts {
  /** CPU ms per second against heartbeats per second and sockets: perUnit is ms per heartbeat, perSocket ms per second per socket, fixed ms per second. */
  cpu: Record<Part, Line>;
  natsMsgs: Line;
  /** WAL bytes per heartbeat over the windows nobody else wrote in (NaN when there was none). */
  walBytesPerHeartbeat: number;
  /** The instances' RSS summed against sockets: perUnit is bytes per connected agent, fixed is all instances' base. */
  rss: Line;
  /** How many instances the fixed RSS is for. */
  instances: number;
}

export const heartbeatRate = (p: ClusterPoint): number => p.heartbeats / p.seconds;

export function heartbeatCosts(points: readonly ClusterPoint[], instances: number): HeartbeatCosts {
  const perSecond = (y: (p: ClusterPoint) => number) => fitLine(points.map((p) => ({ x: heartbeatRate(p), y: y(p) / p.seconds })));
  const cpu = Object.fromEntries(PARTS.map((part) => [part, fitPlane(points.map((p) => ({ x: heartbeatRate(p), s: p.sockets, y: p.cpuMs[part] / p.seconds })))])) as Record<Part, Line>;
  const clean = points.filter((p) => p.walBytes !== undefined);
  const cleanHeartbeats = clean.reduce((t, p) => t + p.heartbeats, 0);
  return {
    cpu,
    natsMsgs: perSecond((p) => p.natsMsgs),
    walBytesPerHeartbeat: cleanHeartbeats > 0 ? clean.reduce((t, p) => t + p.walBytes!, 0) / cleanHeartbeats : Number.NaN,
    rss: fitLine(points.map((p) => ({ x: p.sockets, y: p.instanceRssBytes }))),
    instances,
  };
}

/** Cores (CPU-seconds per second) a fit predicts at a heartbeat rate and a number of sockets. */
export const coresAt = (line: Line, heartbeatsPerS: number, sockets: number): number => (line.fixed + line.perUnit * heartbeatsPerS + (line.perSocket ?? 0) * sockets) / 1000;

/** Each measured step's CPU as the lines predict it, beside what was measured (cores, the fleet's excluded: it is not the product). */
export function checkAgainstPoints(costs: HeartbeatCosts, points: readonly ClusterPoint[]): Array<{ point: ClusterPoint; predicted: number; measured: number }> {
  const server = PARTS.filter((p) => p !== 'fleet');
  return points.map((point) => ({
    point,
    predicted: server.reduce((t, part) => t + coresAt(costs.cpu[part], heartbeatRate(point), point.sockets), 0),
    measured: server.reduce((t, part) => t + point.cpuMs[part] / point.seconds / 1000, 0),
  }));
}

export interface ModelAssumptions {
  agents: number;
  intervalS: number;
  /** The share of a core each part may keep busy, e.g. 0.5 (room for the burst after an outage, the console). */
  headroom: number;
  /** Metric tables' growth per agent per day (docs/sizing.md) and the days kept (METRICS_RETENTION_DAYS). */
  metricBytesPerAgentDay: number;
  retentionDays: number;
  /** Fewest instances, for availability (one may be down). */
  minInstances: number;
}

export interface ClusterModel {
  heartbeatsPerS: number;
  /** Instances' CPU busy in total, and the instances for it at the headroom (each one event loop: one core). */
  instanceCores: number;
  instances: number;
  postgresCores: number;
  haproxyCores: number;
  natsCores: number;
  /** Cores to provision for each at the headroom. */
  provisioned: { instances: number; postgres: number; haproxy: number; nats: number };
  natsMsgsPerS: number;
  walBytesPerDay: number;
  metricBytesPerDay: number;
  metricBytesHeld: number;
  /** The instances' resident memory summed. */
  instanceRssBytes: number;
}

export function clusterModel(costs: HeartbeatCosts, a: ModelAssumptions): ClusterModel {
  const rate = a.agents / a.intervalS;
  // The fixed CPU measured was that of `costs.instances` instances; per instance it comes once each.
  const fixedPerInstance = costs.cpu.instances.fixed / costs.instances / 1000;
  const variable = coresAt({ ...costs.cpu.instances, fixed: 0 }, rate, a.agents);
  const instances = Math.max(a.minInstances, Math.ceil(variable / Math.max(a.headroom - fixedPerInstance, 1e-9)));
  const instanceCores = variable + fixedPerInstance * instances;
  const postgresCores = coresAt(costs.cpu.postgres, rate, a.agents);
  const haproxyCores = coresAt(costs.cpu.haproxy, rate, a.agents);
  const natsCores = coresAt(costs.cpu.nats, rate, a.agents);
  const provision = (cores: number) => Math.ceil(cores / a.headroom);
  return {
    heartbeatsPerS: rate,
    instanceCores,
    instances,
    postgresCores,
    haproxyCores,
    natsCores,
    provisioned: { instances, postgres: provision(postgresCores), haproxy: provision(haproxyCores), nats: provision(natsCores) },
    natsMsgsPerS: costs.natsMsgs.fixed + costs.natsMsgs.perUnit * rate,
    walBytesPerDay: costs.walBytesPerHeartbeat * rate * DAY_S,
    metricBytesPerDay: a.metricBytesPerAgentDay * a.agents,
    metricBytesHeld: a.metricBytesPerAgentDay * a.agents * a.retentionDays,
    instanceRssBytes: (costs.rss.fixed / costs.instances) * instances + costs.rss.perUnit * a.agents,
  };
}
