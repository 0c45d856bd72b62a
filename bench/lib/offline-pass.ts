// The offline rule at 10,000 agents (issue 31, build 6): one StatusMonitor.runOnce() with the
// AlertEvaluation.afterStatusCheck() that rides on it, timed in four states, on the real classes and a
// FakeClock, with nothing else running in the process. Agents are seeded by one multi-row insert
// (INSERT … SELECT generate_series) with heartbeat ages to the millisecond, 0–110 s (all online), over 20
// customers; the default offline rule (5 min) notifies one webhook channel. The dispatcher is not
// started, so queued notifications stay in the outbox (they are marked delivered between cycles, as
// the dispatcher would).
//
// States: steady (all online, nothing changes), mass outage (the clock jumps 10 min: every agent goes
// offline, 10,000 alerts fire, 10,000 outbox rows), the passes after (still offline, nothing new), and
// all back (every heartbeat fresh again: 10,000 alerts resolve). Outage, after and back run in cycles,
// 20 min apart on the clock so no agent counts as flapping.
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { pino } from 'pino';
import { createCoreServices } from '../../src/apps/server/services.js';
import type { DbHandle } from '../../src/db/create-db.js';
import type { Database } from '../../src/db/schema.js';
import { createAlertingFeature } from '../../src/modules/alerts/alerting.js';
import { StatusMonitor } from '../../src/modules/monitor/status-monitor.js';
import { FakeClock } from '../../src/platform/clock.js';
import { createLogger } from '../../src/platform/logger.js';
import { QueryCounter } from './alerting-server.js';
import { backendCpuMs, readBackendTicks } from './pg-backend-cpu.js';

const MIN = 60_000;
const CUSTOMERS = 20;

export type OfflineState = 'steady' | 'outage' | 'after' | 'back';

/** One timed pass. */
export interface PassFigures {
  /** StatusMonitor.runOnce(), the offline evaluation included. */
  monitorMs: number;
  monitorCpuMs: number;
  /** AlertEvaluation.afterStatusCheck() alone. */
  evaluationMs: number;
  evaluationCpuMs: number;
  statements: number;
  /** CPU of this database's PostgreSQL backends over the pass (undefined on PGlite or without /proc). */
  databaseCpuMs: number | undefined;
  outboxRows: number;
  alertsFired: number;
  alertsResolved: number;
}

export interface OfflineSettings {
  agents: number;
  /** Timed passes per steady and per after state (after: per cycle). */
  passes: number;
  cycles: number;
}

async function seed(db: Kysely<Database>, agents: number, now: Date): Promise<void> {
  await sql`insert into customers (number, name) select 'C-' || g, 'Customer ' || g from generate_series(1, ${CUSTOMERS}::int) g`.execute(db);
  // Ages in ms, spread over 0–110 s by a multiplicative step: distinct, like real receive times.
  await sql`
    insert into agents (id, name, hostname, platform, customer_id, last_heartbeat, last_status, agent_version)
    select md5('bench-agent-' || g), 'fw-' || lpad(g::text, 5, '0'), 'fw-' || lpad(g::text, 5, '0') || '.example.lan', 'freebsd',
           (select min(id) from customers) + g % ${CUSTOMERS}::int,
           ${now}::timestamptz - ((g * 7919) % 110000) * interval '1 millisecond', 'online', '1.4.2'
    from generate_series(1, ${agents}::int) g`.execute(db);
  const channel = await sql<{ id: number }>`
    insert into notification_channels (name, type, settings) values ('on-call webhook', 'webhook', ${JSON.stringify({ url: 'https://hooks.example.net/rmm' })}::jsonb)
    returning id`.execute(db);
  await sql`
    insert into alert_rule_channels (rule_id, channel_id)
    select id, ${channel.rows[0]!.id}::int from alert_rules where kind = 'agent_offline'`.execute(db);
  await sql`analyze`.execute(db);
}

/** Every agent's heartbeat fresh again as of `now`, with the same spread of ages. */
async function allBack(db: Kysely<Database>, now: Date): Promise<void> {
  await sql`update agents set last_heartbeat = ${now}::timestamptz - floor(random() * 110000) * interval '1 millisecond'`.execute(db);
}

async function counts(db: Kysely<Database>, at: Date) {
  const { rows } = await sql<{ outbox: number; fired: number; resolved: number }>`
    select (select count(*) from notification_outbox where created_at = ${at}) as outbox,
           (select count(*) from alerts where fired_at = ${at}) as fired,
           (select count(*) from alerts where resolved_at = ${at}) as resolved`.execute(db);
  const r = rows[0]!;
  return { outboxRows: Number(r.outbox), alertsFired: Number(r.fired), alertsResolved: Number(r.resolved) };
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};

/** Runs every state on a fresh database; `handle` must be empty and migrated. */
export async function measureOfflinePasses(handle: DbHandle, s: OfflineSettings, log: (m: string) => void): Promise<Record<OfflineState, PassFigures[]>> {
  const raw = handle.db;
  const queries = new QueryCounter();
  const db = raw.withPlugin(queries);
  const clock = new FakeClock(new Date(Math.floor(Date.now() / MIN) * MIN));
  const logger = createLogger({ level: 'info', destination: pino.destination({ dest: '/dev/null', sync: true }) });
  const core = createCoreServices({ ...handle, db }, { jwtSecret: randomBytes(32).toString('base64url'), encryptionKey: randomBytes(32) }, clock);
  const alerting = createAlertingFeature({ db, clock, logger, box: core.box, settings: core.settings, allowLoopback: false, publicUrl: 'https://rmm.example.net' });
  let evaluation = { ms: 0, cpuMs: 0 };
  const monitor = new StatusMonitor(db, clock, MIN, logger, async () => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await alerting.evaluation.afterStatusCheck();
    evaluation = { ms: performance.now() - started, cpuMs: cpuMs(cpu) };
  });

  const started = performance.now();
  await seed(raw, s.agents, clock.now());
  log(`seeded ${s.agents} agents in ${(performance.now() - started).toFixed(0)} ms`);

  const pass = async (): Promise<PassFigures> => {
    const ticks = handle.dialect === 'postgres' ? await readBackendTicks(raw) : undefined;
    const before = queries.snapshot().statements;
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    await monitor.runOnce();
    const monitorMs = performance.now() - t0;
    const monitorCpuMs = cpuMs(cpu);
    const statements = queries.snapshot().statements - before;
    const databaseCpuMs = ticks ? backendCpuMs(ticks, await readBackendTicks(raw)) : undefined;
    return { monitorMs, monitorCpuMs, evaluationMs: evaluation.ms, evaluationCpuMs: evaluation.cpuMs, statements, databaseCpuMs, ...(await counts(raw, clock.now())) };
  };
  const result: Record<OfflineState, PassFigures[]> = { steady: [], outage: [], after: [], back: [] };
  const record = (state: OfflineState, f: PassFigures) => {
    result[state].push(f);
    log(
      `${state}: runOnce ${f.monitorMs.toFixed(1)} ms (CPU ${f.monitorCpuMs.toFixed(1)}), afterStatusCheck ${f.evaluationMs.toFixed(1)} ms (CPU ${f.evaluationCpuMs.toFixed(1)}), ` +
        `${f.statements} statements${f.databaseCpuMs === undefined ? '' : `, database CPU ${f.databaseCpuMs.toFixed(0)} ms`}; ` +
        `alerts fired ${f.alertsFired}, resolved ${f.alertsResolved}, outbox rows ${f.outboxRows}`,
    );
  };

  // A cycle: outage at +10 min, the passes after a minute apart, all back, then quiet until the next.
  // The next outage comes over 15 min after this one, so the flip count stays below flapping (4 in 15 min).
  const cycleMs = Math.max(20, 12 + s.passes) * MIN;
  await pass(); // untimed: first statements, plans, caches
  for (let i = 0; i < s.passes; i++) record('steady', await pass());
  for (let cycle = 0; cycle < s.cycles; cycle++) {
    const base = clock.now().getTime();
    await sql`update notification_outbox set delivered_at = ${clock.now()} where delivered_at is null`.execute(raw);
    clock.set(new Date(base + 10 * MIN));
    record('outage', await pass());
    for (let i = 0; i < s.passes; i++) {
      clock.set(new Date(clock.now().getTime() + MIN));
      record('after', await pass());
    }
    clock.set(new Date(clock.now().getTime() + MIN));
    await allBack(raw, clock.now());
    record('back', await pass());
    clock.set(new Date(base + cycleMs));
    await allBack(raw, clock.now());
    await pass(); // untimed: nothing changes
  }
  await alerting.stop();
  return result;
}
