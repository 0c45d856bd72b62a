// The RMM server's Prometheus metrics (issue 34), on a registry of its own per app: tests run many apps
// in one process, and prom-client's global registry would mix them. Counters and histograms are fed
// where things happen (heartbeat and login responses, commands, task runs, deliveries); gauges read
// their sources at scrape time. No label ever holds an agent id, a user or a path parameter.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the gauges read when Prometheus scrapes. */
export interface GaugeSources {
  /** Connected agents of this instance by platform (unknown when it never said). */
  connectedByPlatform(): Promise<Record<string, number>>;
  /** Every agent by status: online, stale, offline, unknown. */
  agentsByStatus(): Promise<Record<string, number>>;
  tunnels(): { open: number; sessions: number; bytesIn: number; bytesOut: number };
  droppedFrames(): number;
  /** The PostgreSQL pool; null on the embedded database. */
  pool(): { total: number; idle: number; waiting: number } | null;
  queryErrors(): number;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class ServerMetrics {
  readonly registry = new Registry();
  readonly heartbeats: Counter<'outcome'>;
  readonly heartbeatSeconds: Histogram;
  readonly commands: Counter<'command' | 'outcome'>;
  readonly commandSeconds: Histogram<'command'>;
  readonly taskRuns: Counter<'status'>;
  readonly webhookDeliveries: Counter<'outcome'>;
  readonly notificationDeliveries: Counter<'outcome'>;
  readonly loginFailures: Counter<'reason'>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'rmm_' });
    // Gauges that prom-client names with `_total`, which Prometheus keeps for counters (promtool check
    // metrics refuses them); the handle and request counts tell little an operator acts on anyway.
    for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) this.registry.removeSingleMetric(`rmm_nodejs_${name}`);
    this.heartbeats = new Counter({ name: 'rmm_heartbeats_total', help: 'Agent heartbeats answered, by outcome (stored, or the error code)', labelNames: ['outcome'], registers });
    this.heartbeatSeconds = new Histogram({ name: 'rmm_heartbeat_duration_seconds', help: 'Time to store and answer a heartbeat', buckets: SECONDS, registers });
    this.commands = new Counter({ name: 'rmm_agent_commands_total', help: 'Commands sent to agents, by command and outcome (ok, or the error code)', labelNames: ['command', 'outcome'], registers });
    this.commandSeconds = new Histogram({ name: 'rmm_agent_command_duration_seconds', help: "Round trip of a command to the agent's answer", labelNames: ['command'], buckets: SECONDS, registers });
    this.taskRuns = new Counter({ name: 'rmm_task_runs_total', help: 'Task runs closed, by status', labelNames: ['status'], registers });
    this.webhookDeliveries = new Counter({ name: 'rmm_webhook_deliveries_total', help: 'Task webhooks, by outcome (delivered, failed)', labelNames: ['outcome'], registers });
    this.notificationDeliveries = new Counter({ name: 'rmm_notification_deliveries_total', help: 'Alert notification tries, by outcome (delivered, failed)', labelNames: ['outcome'], registers });
    this.loginFailures = new Counter({ name: 'rmm_login_failures_total', help: 'Refused sign-ins, by reason (password, second_factor, throttled)', labelNames: ['reason'], registers });
  }

  /** Gauges that read their sources at each scrape. */
  observe(sources: GaugeSources): void {
    const registers = [this.registry];
    new Gauge({
      name: 'rmm_agents_connected',
      help: "Agents with a WebSocket open to this instance, by platform",
      labelNames: ['platform'],
      registers,
      async collect() {
        this.reset();
        for (const [platform, n] of Object.entries(await sources.connectedByPlatform())) this.set({ platform }, n);
      },
    });
    new Gauge({
      name: 'rmm_agents',
      help: 'Agents by status (online, stale, offline, unknown)',
      labelNames: ['status'],
      registers,
      async collect() {
        for (const [status, n] of Object.entries(await sources.agentsByStatus())) this.set({ status }, n);
      },
    });
    const tunnels = sources.tunnels;
    new Gauge({ name: 'rmm_tunnels_open', help: 'Open TCP tunnels on this instance', registers, collect() { this.set(tunnels().open); } });
    new Gauge({ name: 'rmm_tunnel_sessions_open', help: 'Client connections carried by open tunnels', registers, collect() { this.set(tunnels().sessions); } });
    new Counter({
      name: 'rmm_tunnel_relayed_bytes_total',
      help: 'Bytes relayed through tunnels since the start, by direction (in: client to target)',
      labelNames: ['direction'],
      registers,
      collect() {
        const t = tunnels();
        this.reset();
        this.inc({ direction: 'in' }, t.bytesIn);
        this.inc({ direction: 'out' }, t.bytesOut);
      },
    });
    new Counter({ name: 'rmm_websocket_frames_dropped_total', help: 'Agent WebSocket frames dropped (unparseable or unknown)', registers, collect() { this.reset(); this.inc(sources.droppedFrames()); } });
    new Gauge({
      name: 'rmm_db_pool_connections',
      help: 'PostgreSQL pool connections by state (in_use, idle, waiting: queries waiting for one); absent on the embedded database',
      labelNames: ['state'],
      registers,
      collect() {
        const pool = sources.pool();
        if (!pool) return;
        this.set({ state: 'in_use' }, pool.total - pool.idle);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'waiting' }, pool.waiting);
      },
    });
    new Counter({ name: 'rmm_db_query_errors_total', help: 'Database queries that failed', registers, collect() { this.reset(); this.inc(sources.queryErrors()); } });
  }
}
