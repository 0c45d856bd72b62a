// One load round of the alerting benchmark's ingest comparison (bench/alerting.ts): heartbeat-ingest's
// load against the alerting server, then a wait until the threshold evaluator has caught up, with what
// the server did in the round: CPU (this process, and on PostgreSQL the database's backends),
// statements, threshold-state writes, alerts and notifications.
import { performance } from 'node:perf_hooks';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { AlertingServer } from './alerting-server.js';
import { measure } from './load.js';
import { watchBackendCpu } from './pg-backend-cpu.js';
import { HEARTBEAT_PATH } from './servers.js';

export interface LoadPlan {
  agentIds: string[];
  clients: number;
  warmupMs: number;
  durationMs: number;
  fixture: string;
  bodyBytes: number;
}

export interface Round {
  /** Heartbeats/s answered in the measured window (the client's figure, as in heartbeat-ingest). */
  rate: number;
  /** Heartbeats/s from the round's first answer until the evaluator had evaluated the last one. */
  sustained: number;
  p50: number;
  p99: number;
  errors: number;
  firstError: string | undefined;
  /** How long the evaluator still worked after the load ended. */
  drainMs: number;
  /** Statements a second while only the evaluator worked (after the load), when that took over 0.5 s. */
  drainStatementsPerS: number | undefined;
  cpuPerHb: number;
  dbCpuPerHb: number | undefined;
  statementsPerHb: number;
  conditionWritesPerHb: number;
  fired: number;
  resolved: number;
  outbox: number;
  webhooks: number;
}

/** `raw`: the database without the server's statement counter; `postgres`: whether to read its backends' CPU. */
export async function loadRound(server: AlertingServer, raw: Kysely<Database>, postgres: boolean, plan: LoadPlan): Promise<Round> {
  const since = new Date();
  const [hb0, q0, web0] = [server.heartbeats(), server.queries.snapshot(), server.webhookMessages()];
  const database = postgres ? watchBackendCpu(raw) : undefined;
  server.firstHeartbeatAt(true);
  const cpu0 = process.cpuUsage();
  const m = await measure({ url: server.url + HEARTBEAT_PATH, apiKey: server.agentKey, concurrency: plan.clients, ...plan });
  const drainFrom = performance.now();
  const qDrain = server.queries.snapshot().statements;
  await server.evaluatorIdle();
  const idleAt = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const q1 = server.queries.snapshot();
  const dbCpu = await database?.stop();
  const heartbeats = Math.max(1, server.heartbeats() - hb0);
  const { rows } = await sql<{ fired: number; resolved: number; outbox: number }>`
    select (select count(*) from alerts where fired_at >= ${since}) as fired, (select count(*) from alerts where resolved_at >= ${since}) as resolved,
           (select count(*) from notification_outbox where created_at >= ${since}) as outbox`.execute(raw);
  return {
    rate: m.ratePerS,
    sustained: heartbeats / ((idleAt - (server.firstHeartbeatAt() ?? drainFrom)) / 1000),
    p50: m.p50Ms,
    p99: m.p99Ms,
    errors: m.errors,
    firstError: m.firstError,
    drainMs: idleAt - drainFrom,
    drainStatementsPerS: idleAt - drainFrom > 500 ? (q1.statements - qDrain) / ((idleAt - drainFrom) / 1000) : undefined,
    cpuPerHb: (cpu.user + cpu.system) / 1000 / heartbeats,
    dbCpuPerHb: dbCpu === undefined ? undefined : dbCpu / heartbeats,
    statementsPerHb: (q1.statements - q0.statements) / heartbeats,
    conditionWritesPerHb: (q1.conditionWrites - q0.conditionWrites) / heartbeats,
    fired: Number(rows[0]!.fired),
    resolved: Number(rows[0]!.resolved),
    outbox: Number(rows[0]!.outbox),
    webhooks: server.webhookMessages() - web0,
  };
}

const f = (n: number | undefined, digits = 2) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits));

/** One line for the log. */
export function describeRound(r: Round): string {
  return (
    `${f(r.rate, 0)}/s in the window, ${f(r.sustained, 0)}/s until evaluated (evaluator busy ${f(r.drainMs, 0)} ms after the load` +
    `${r.drainStatementsPerS === undefined ? '' : `, at ${f(r.drainStatementsPerS, 0)} statements/s`}); p50 ${f(r.p50, 1)} ms p99 ${f(r.p99, 1)} ms, ` +
    `${r.errors} errors; server CPU ${f(r.cpuPerHb, 3)} ms/heartbeat${r.dbCpuPerHb === undefined ? '' : `, database ${f(r.dbCpuPerHb, 3)}`}; ` +
    `${f(r.statementsPerHb)} statements and ${f(r.conditionWritesPerHb)} threshold-state writes per heartbeat; alerts fired ${r.fired}, resolved ${r.resolved}, ` +
    `outbox rows ${r.outbox}, webhook messages ${r.webhooks}` +
    (r.firstError ? `; first error: ${r.firstError}` : '')
  );
}

/** Conditions that cross on every heartbeat (bench/lib/alert-rule-set.ts), each firing once per agent. */
export const CONSTANT_ALERTS_PER_AGENT = 6;

export async function openConstantAlerts(db: Kysely<Database>): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*) as n from alerts a join alert_rules r on r.id = a.rule_id
    where a.state <> 'resolved' and r.kind = 'metric_threshold' and r.params->>'metric' <> 'cpu_usage'`.execute(db);
  return Number(rows[0]!.n);
}
