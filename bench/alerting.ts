// Alerting's cost (issue 31, build 6), two measurements per backend:
//
// 1. Heartbeat ingest with 20 active rules vs none, in the same run, server and database, in
//    interleaved rounds A B Q, B Q A, Q A B (medians). A: no rule enabled (the three defaults disabled). B: 20
//    metric_threshold rules and the default offline and certificate rules, all notifying a webhook
//    channel on loopback (bench/lib/alert-rule-set.ts says which rules cross on which heartbeats). Q: the
//    same rules with the CPU thresholds at 100 %, so no rule changes state (the comparisons alone). Before
//    the rounds, B rounds until every constant condition has fired once per agent (the first reported).
//    The load is heartbeat-ingest's (forked client, padded FreeBSD fixture, keep-alive clients); the real
//    server runs in this process at the production log level (`info`, to /dev/null). Threshold rules are
//    evaluated after the batch commits, off the request path, so each round waits after the load until
//    the evaluator is idle: heartbeats/s = heartbeats answered in the round ÷ the time from the first
//    answer to the evaluator's idle, and server CPU = this process's CPU over the whole round ÷ the
//    heartbeats answered in it (bench/lib/ingest-round.ts). Target (issue): B ≥ 0.9 of A.
// 2. One pass of the offline rule at 10,000 agents (bench/lib/offline-pass.ts): StatusMonitor.runOnce()
//    and the AlertEvaluation.afterStatusCheck() in it, steady, mass outage, the passes after, all back.
//    No target; the baseline is the monitor's own statement in the same pass.
// Measured, never asserted.
//
// Environment: BENCH_AGENTS (500), BENCH_ALERT_CLIENTS (32), BENCH_WARMUP_S (4), BENCH_DURATION_S (8),
// BENCH_ALERT_ROUNDS (3), BENCH_BODY_BYTES (30720), BENCH_FIXTURE, BENCH_OFFLINE_AGENTS (10000),
// BENCH_OFFLINE_PASSES (5), BENCH_OFFLINE_CYCLES (3), BENCH_ALERT_PARTS (ingest,offline), BENCH_BACKENDS.
import { randomBytes } from 'node:crypto';
import type { DbHandle } from '../src/db/create-db.js';
import { installRules, type RuleMode } from './lib/alert-rule-set.js';
import { startAlertingServer } from './lib/alerting-server.js';
import { backendsFrom, openBackend, positiveNumber } from './lib/backends.js';
import { DEFAULT_FIXTURE } from './lib/heartbeat-body.js';
import { CONSTANT_ALERTS_PER_AGENT, describeRound, loadRound, openConstantAlerts, type Round } from './lib/ingest-round.js';
import { measureOfflinePasses, type OfflineState, type PassFigures } from './lib/offline-pass.js';
import { median } from './lib/stats.js';
import { runWhenMain, type BenchRow, type Target } from './lib/table.js';

export const name = 'alerting';
const log = (message: string) => process.stderr.write(`[${name}] ${message}\n`);
const TARGET = 0.9;
/** The table's targets: B ÷ A heartbeats/s ≥ 0.9, and A ÷ B CPU ≥ 0.9, i.e. B ÷ A CPU ≤ 1/0.9. */
const TARGET_RATE: Target = { op: '≥', value: TARGET };
const TARGET_CPU: Target = { op: '≤', value: 1.111 };

function settingsFrom(env: NodeJS.ProcessEnv) {
  const parts = (env.BENCH_ALERT_PARTS ?? 'ingest,offline').split(',').map((p) => p.trim());
  return {
    agents: Math.round(positiveNumber(env, 'BENCH_AGENTS', 500)),
    clients: Math.round(positiveNumber(env, 'BENCH_ALERT_CLIENTS', 32)),
    warmupMs: positiveNumber(env, 'BENCH_WARMUP_S', 4) * 1000,
    durationMs: positiveNumber(env, 'BENCH_DURATION_S', 8) * 1000,
    rounds: Math.round(positiveNumber(env, 'BENCH_ALERT_ROUNDS', 3)),
    bodyBytes: Math.round(positiveNumber(env, 'BENCH_BODY_BYTES', 30 * 1024)),
    fixture: env.BENCH_FIXTURE ?? DEFAULT_FIXTURE,
    offline: { agents: Math.round(positiveNumber(env, 'BENCH_OFFLINE_AGENTS', 10_000)), passes: Math.round(positiveNumber(env, 'BENCH_OFFLINE_PASSES', 5)), cycles: Math.round(positiveNumber(env, 'BENCH_OFFLINE_CYCLES', 3)) },
    ingest: parts.includes('ingest'),
    offlinePass: parts.includes('offline'),
  };
}
type Settings = ReturnType<typeof settingsFrom>;

const f = (n: number | undefined, digits = 2) => (n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(digits));

async function ingestRows(backend: string, db: DbHandle, s: Settings): Promise<BenchRow[]> {
  const agentIds = Array.from({ length: s.agents }, () => randomBytes(16).toString('hex'));
  const base = { benchmark: name, backend, setting: `ingest, ${s.clients} clients, ${s.agents} agents` };
  log(`${backend}: ${db.location}; registering ${s.agents} agents`);
  const server = await startAlertingServer(db, agentIds);
  if (!server) return [{ ...base, figure: Number.NaN, unit: 'heartbeats/s', baseline: Number.NaN, baselineLabel: 'no rules', better: 'higher', note: 'skipped: no agent endpoints in this checkout' }];
  const plan = { agentIds, clients: s.clients, warmupMs: s.warmupMs, durationMs: s.durationMs, fixture: s.fixture, bodyBytes: s.bodyBytes };
  try {
    const rules = await installRules(server.call, agentIds[0]!);
    const run = async (label: string, mode: RuleMode) => {
      await rules.set(mode);
      await server.evaluatorIdle();
      const r = await loadRound(server, db.db, db.dialect === 'postgres', plan);
      log(`${backend}, ${label}: ${describeRound(r)}`);
      return r;
    };
    const first = await run('B, first round with rules', 'B');
    // The rounds compared measure the steady state: every agent's constant conditions already fired. At a
    // low rate the first round does not reach every agent (or not twice, 10 s apart): more rounds follow,
    // not compared. The same before every later round with rules: while an A round has the rules
    // disabled, the minute's alert evaluation resolves their open alerts (a disabled rule's alerts would
    // never clear), and the next round with rules fired all 3,000 again (one B round in the first
    // 2026-11-26 run: 3,098 fired, 0.77 of A), which is the cost of switching rules on, not of having them.
    const expected = CONSTANT_ALERTS_PER_AGENT * s.agents;
    const prime = async (mode: RuleMode) => {
      for (let extra = 1; extra <= 12; extra++) {
        const open = await openConstantAlerts(db.db);
        if (open >= expected) return;
        log(`${backend}: ${open} of ${expected} constant alerts open; one more round with rules, not compared`);
        await run(`${mode}, priming round ${extra}`, mode);
      }
    };
    await prime('B');
    const rounds: Record<RuleMode, Round[]> = { A: [], B: [], Q: [] };
    // Each round in another order (A B Q, B Q A, Q A B), so no mode always follows the same one.
    const order: RuleMode[] = ['A', 'B', 'Q'];
    for (let i = 0; i < s.rounds; i++) {
      for (let j = 0; j < order.length; j++) {
        const mode = order[(i + j) % order.length]!;
        if (mode !== 'A') {
          await rules.set(mode);
          await prime(mode);
        }
        rounds[mode].push(await run(`${mode}${i + 1} (${MODE_LABEL[mode]})`, mode));
      }
    }
    const m = (mode: RuleMode, pick: (r: Round) => number | undefined) => median(rounds[mode].map((r) => pick(r) ?? Number.NaN));
    const errors = (mode: RuleMode) => rounds[mode].reduce((t, r) => t + r.errors, 0);
    const mark = (x: number) => `${x.toFixed(2)} ${x >= TARGET ? '✔' : '✘'}`;
    const work = (list: Round[]) =>
      `alerts fired ${list.map((r) => r.fired).join('/')}, resolved ${list.map((r) => r.resolved).join('/')}, outbox rows ${list.map((r) => r.outbox).join('/')}, webhook messages ${list.map((r) => r.webhooks).join('/')}`;
    const costs = (mode: RuleMode) =>
      `CPU ${f(m(mode, (r) => r.cpuPerHb), 3)} ms/heartbeat${db.dialect === 'postgres' ? ` + database ${f(m(mode, (r) => r.dbCpuPerHb), 3)}` : ''}, ` +
      `${f(m(mode, (r) => r.statementsPerHb))} statements and ${f(m(mode, (r) => r.conditionWritesPerHb))} threshold-state writes per heartbeat`;
    const rate = (mode: RuleMode) => m(mode, (r) => r.sustained);
    const noRules = { baseline: rate('A'), baselineLabel: 'no rules, heartbeats/s', better: 'higher' as const };
    return [
      {
        ...base,
        ...noRules,
        figure: rate('B'),
        unit: 'heartbeats/s, 20 rules',
        target: TARGET_RATE,
        p50Ms: m('B', (r) => r.p50),
        p99Ms: m('B', (r) => r.p99),
        errors: errors('B') + errors('A'),
        note:
          `target ≥ ${TARGET} of no rules: ${mark(rate('B') / rate('A'))}. Medians of ${s.rounds} interleaved rounds, each counted until the evaluator had caught up ` +
          `(busy B ${f(m('B', (r) => r.drainMs), 0)} ms, A ${f(m('A', (r) => r.drainMs), 0)} ms after the load` +
          `${rounds.B.some((r) => r.drainStatementsPerS !== undefined) ? `; meanwhile ${f(m('B', (r) => r.drainStatementsPerS), 0)} statements/s, one at a time` : ''}). In the window alone: B ${f(m('B', (r) => r.rate), 0)}/s, ` +
          `A ${f(m('A', (r) => r.rate), 0)}/s. No rules: p50 ${f(m('A', (r) => r.p50), 1)} ms, p99 ${f(m('A', (r) => r.p99), 1)} ms. B rounds: ${work(rounds.B)}`,
      },
      {
        ...base,
        figure: m('B', (r) => r.cpuPerHb),
        unit: 'server CPU ms/heartbeat, 20 rules',
        target: TARGET_CPU,
        baseline: m('A', (r) => r.cpuPerHb),
        baselineLabel: 'no rules, CPU ms/heartbeat',
        better: 'lower',
        note: `no rules ÷ 20 rules: ${mark(m('A', (r) => r.cpuPerHb) / m('B', (r) => r.cpuPerHb))} (what a CPU-bound server keeps); over the whole round, evaluation included. B: ${costs('B')}. A: ${costs('A')}`,
      },
      {
        ...base,
        ...noRules,
        setting: `${base.setting}, 20 rules, no state changes`,
        figure: rate('Q'),
        unit: 'heartbeats/s, 20 quiet rules',
        p50Ms: m('Q', (r) => r.p50),
        p99Ms: m('Q', (r) => r.p99),
        errors: errors('Q'),
        note: `${mark(rate('Q') / rate('A'))}; the CPU rules at 100 %, so no rule changes state: the per-heartbeat comparisons alone. ${costs('Q')}; CPU ratio ${(m('A', (r) => r.cpuPerHb) / m('Q', (r) => r.cpuPerHb)).toFixed(2)}`,
      },
      {
        ...base,
        ...noRules,
        setting: `${base.setting}, first round with rules`,
        figure: first.sustained,
        unit: 'heartbeats/s, 20 rules',
        p50Ms: first.p50,
        p99Ms: first.p99,
        errors: first.errors,
        note:
          `the conditions that cross on every heartbeat fire (${CONSTANT_ALERTS_PER_AGENT} per agent, ${expected} in all, as far as the round reaches): ${work([first])}; ` +
          `evaluator busy ${f(first.drainMs, 0)} ms after the load; server CPU ${f(first.cpuPerHb, 3)} ms/heartbeat`,
      },
    ];
  } finally {
    await server.close();
  }
}

const MODE_LABEL: Record<RuleMode, string> = {
  A: 'no rules',
  B: '20 threshold rules + offline + certificate',
  Q: 'the same, CPU thresholds at 100 %',
};

const STATE_LABEL: Record<OfflineState, string> = {
  steady: 'steady (all online)',
  outage: 'mass outage, first pass',
  after: 'the pass after (nothing new)',
  back: 'all back online',
};

function offlineRows(backend: string, s: Settings, figures: Record<OfflineState, PassFigures[]>): BenchRow[] {
  return (Object.keys(STATE_LABEL) as OfflineState[]).map((state) => {
    const list = figures[state];
    const m = (pick: (p: PassFigures) => number | undefined) => median(list.map((p) => pick(p) ?? Number.NaN));
    const range = (pick: (p: PassFigures) => number) => `${Math.min(...list.map(pick)).toFixed(0)}–${Math.max(...list.map(pick)).toFixed(0)}`;
    return {
      benchmark: name,
      backend,
      setting: `offline rule, ${s.offline.agents} agents: ${STATE_LABEL[state]}`,
      figure: m((p) => p.evaluationMs),
      unit: 'ms afterStatusCheck',
      baseline: m((p) => p.monitorMs - p.evaluationMs),
      baselineLabel: "monitor's own statement ms",
      better: 'lower',
      p50Ms: m((p) => p.evaluationMs),
      note:
        `median of ${list.length} passes (afterStatusCheck ${range((p) => p.evaluationMs)} ms); whole runOnce ${f(m((p) => p.monitorMs), 1)} ms. ` +
        `CPU: afterStatusCheck ${f(m((p) => p.evaluationCpuMs), 1)} ms, runOnce ${f(m((p) => p.monitorCpuMs), 1)} ms` +
        (backend === 'postgres' ? ` + database backends ${f(m((p) => p.databaseCpuMs), 0)} ms` : ' (PGlite: the database included)') +
        `; ${f(m((p) => p.statements), 0)} statements; alerts fired ${f(m((p) => p.alertsFired), 0)}, resolved ${f(m((p) => p.alertsResolved), 0)}; outbox rows ${f(m((p) => p.outboxRows), 0)}`,
    };
  });
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const s = settingsFrom(env);
  const rows: BenchRow[] = [];
  for (const backend of await backendsFrom(env)) {
    const parts: Array<(db: DbHandle) => Promise<BenchRow[]>> = [];
    if (s.ingest) parts.push((db) => ingestRows(backend, db, s));
    if (s.offlinePass) parts.push(async (db) => offlineRows(backend, s, await measureOfflinePasses(db, s.offline, (msg) => log(`${backend}, offline pass: ${msg}`))));
    for (const part of parts) {
      const db = await openBackend(backend, env);
      if (typeof db === 'string') {
        rows.push({ benchmark: name, backend, setting: '–', figure: Number.NaN, unit: '–', baseline: Number.NaN, baselineLabel: '–', better: 'higher', note: db });
        break;
      }
      try {
        rows.push(...(await part(db)));
      } finally {
        await db.close();
      }
    }
  }
  return rows;
}

runWhenMain(import.meta.url, () => run());
