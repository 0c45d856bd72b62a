// Evaluation of the rules that run on a timer (issue 31). The offline rule rides on the status monitor:
// after each of its passes, flapping agents are found (4 or more flips in 15 minutes into or out of the
// status the rule watches: one notice, then quiet until 15 minutes without a change), then each offline
// rule is reconciled. The
// other periodic kinds (certificate, backup age, pending update) and reminders run on their own
// timer, which also resolves the open alerts of rules that were switched off. Reconciling a rule =
// fire what is wrong and has no open alert, resolve open alerts whose condition is gone: one query per
// rule, so the cost does not grow with a query per agent.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { enabledRules, ruleCovers, type ActiveRule } from './active-rules.repo.js';
import { FLAPPING_LABEL, type AlertEngine, type Finding } from './alert-engine.js';
import { openAlertsOfDisabledRules, openAlertsOfRule, openKey, type AlertRow } from './alerts.repo.js';
import { PERIODIC_CONDITIONS, type PeriodicKind } from './periodic-conditions.js';

const FLAP_WINDOW_MS = 15 * 60_000;
const FLAP_CHANGES = 4;
const STATUS_EVENTS = sql`('online', 'stale', 'offline')`;

export class AlertEvaluation {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly engine: AlertEngine,
  ) {}

  /** After a status monitor pass: flapping notices, then every offline rule. */
  async afterStatusCheck(): Promise<void> {
    const rules = await this.#rules('agent_offline');
    if (rules.length === 0) return;
    const now = this.clock.now();
    const flapping = new Map<'stale' | 'offline', Awaited<ReturnType<typeof flappingAgents>>>();
    for (const rule of rules) {
      const level = rule.params.status;
      if (!flapping.has(level)) flapping.set(level, await flappingAgents(this.db, level, now));
      const quiet = await this.#updateFlapping(rule, flapping.get(level)!, now);
      await this.reconcile(rule, await PERIODIC_CONDITIONS.agent_offline(this.db, rule, now), quiet);
    }
  }

  /** The timer's pass: alerts of rules switched off, certificates, backups, pending updates, then reminders. */
  async runPeriodic(): Promise<void> {
    for (const [ruleId, alerts] of await openAlertsOfDisabledRules(this.db)) {
      await this.engine.resolve(ruleId, alerts, null, 'the rule was disabled');
    }
    const now = this.clock.now();
    for (const kind of ['certificate_expiry', 'backup_age', 'update_pending', 'check_state'] as const) {
      for (const rule of await this.#rules(kind)) {
        const condition = PERIODIC_CONDITIONS[kind] as (db: Kysely<Database>, r: ActiveRule, at: Date) => Promise<Finding[]>;
        await this.reconcile(rule, await condition(this.db, rule, now));
      }
    }
    await this.engine.remind();
  }

  /**
   * Check-state rules now (a check changed state), and again when the first failing check that is not
   * yet past a rule's for_seconds will be; the timer's pass catches up with anything else.
   */
  async checkStates(): Promise<number | null> {
    const now = this.clock.now();
    let nextDue: number | null = null;
    for (const rule of await this.#rules('check_state')) {
      await this.reconcile(rule, await PERIODIC_CONDITIONS.check_state(this.db, rule, now));
      const due = await nextCheckDue(this.db, rule, now);
      if (due !== null && (nextDue === null || due < nextDue)) nextDue = due;
    }
    return nextDue;
  }

  /** Fires findings that have no open alert and resolves open alerts that are no longer found. */
  async reconcile(rule: ActiveRule, findings: readonly Finding[], quiet: ReadonlySet<string> = new Set()): Promise<void> {
    const open = await openAlertsOfRule(this.db, rule.id);
    const found = new Set(findings.map((f) => openKey(f.agentId, f.label)));
    const fresh = findings.filter((f) => !open.has(openKey(f.agentId, f.label)));
    const gone = [...open.values()].filter((a) => a.label !== FLAPPING_LABEL && !found.has(openKey(a.agent_id, a.label)));
    await this.engine.fire(rule, fresh, quiet);
    await this.engine.resolve(rule.id, gone, null, null, quiet);
  }

  #rules<K extends PeriodicKind>(kind: K): Promise<Array<ActiveRule<K>>> {
    return enabledRules(this.db, kind, (ruleId, err) => this.logger.error({ err, rule_id: ruleId }, 'alert rule skipped: its params do not fit its kind'));
  }

  /**
   * Fires the flapping notice for newly flapping agents the rule covers and resolves it for agents
   * stable for 15 minutes; returns the agents still flapping, whose alerts notify nobody.
   */
  async #updateFlapping(rule: ActiveRule<'agent_offline'>, flapping: ReadonlyArray<{ id: string; customer_id: number | null; changes: number }>, now: Date): Promise<Set<string>> {
    const open = [...(await openAlertsOfRule(this.db, rule.id)).values()].filter((a) => a.label === FLAPPING_LABEL);
    const covered = flapping.filter((agent) => ruleCovers(rule, agent));
    const findings: Finding[] = covered.map((agent) => ({
      agentId: agent.id,
      label: FLAPPING_LABEL,
      summary: `Flapping: ${rule.params.status === 'offline' ? 'went offline or came back' : 'went up or down'} ${agent.changes} times in 15 minutes; its further changes are not notified until it has been stable for 15 minutes`,
      value: agent.changes,
      threshold: FLAP_CHANGES,
      since: new Date(now.getTime() - FLAP_WINDOW_MS),
    }));
    await this.engine.fire(rule, findings);
    const stable = await this.#stableAmong(open, now);
    await this.engine.resolve(rule.id, stable);
    const quiet = new Set(covered.map((a) => a.id));
    for (const alert of open) if (!stable.includes(alert)) quiet.add(alert.agent_id);
    return quiet;
  }

  /** Open flapping alerts whose agent has not changed status for 15 minutes. */
  async #stableAmong(open: readonly AlertRow[], now: Date): Promise<AlertRow[]> {
    if (open.length === 0) return [];
    const { rows } = await sql<{ agent_id: string }>`
      select distinct agent_id from agent_events
      where created_at > ${new Date(now.getTime() - FLAP_WINDOW_MS)} and type in ${STATUS_EVENTS}
        and agent_id in (${sql.join(open.map((a) => a.agent_id))})`.execute(this.db);
    const restless = new Set(rows.map((r) => r.agent_id));
    return open.filter((a) => !restless.has(a.agent_id));
  }
}

/**
 * Agents whose status went into or out of the watched level often enough in the last 15 minutes, with
 * their customer and the count. For a rule on `stale` a flip is leaving online or coming back; for a rule
 * on `offline`, reaching offline or leaving it: a blip shorter than the rule's own status is not its
 * concern (a two-minute absence made the built-in five-minute offline rule call an agent flapping,
 * issue 57). Each event is compared with the agent's status before it, also when that was before the
 * window; an agent's first status ever (its first heartbeat) is not a flip.
 */
async function flappingAgents(db: Kysely<Database>, level: 'stale' | 'offline', now: Date): Promise<Array<{ id: string; customer_id: number | null; changes: number }>> {
  const since = new Date(now.getTime() - FLAP_WINDOW_MS);
  const down = (column: string) => (level === 'stale' ? sql`${sql.ref(column)} <> 'online'` : sql`${sql.ref(column)} = 'offline'`);
  const { rows } = await sql<{ id: string; customer_id: number | null; changes: string }>`
    with recent as (
      select agent_id, type, created_at, id from agent_events
      where created_at > ${since} and type in ${STATUS_EVENTS}
    ), before as (
      select distinct on (e.agent_id) e.agent_id, e.type, e.created_at, e.id from agent_events e
      where e.agent_id in (select agent_id from recent) and e.created_at <= ${since} and e.type in ${STATUS_EVENTS}
      order by e.agent_id, e.created_at desc, e.id desc
    ), ordered as (
      select agent_id, type, created_at > ${since} as recent, lag(type) over (partition by agent_id order by created_at, id) as previous
      from (select * from recent union all select * from before) x
    )
    select o.agent_id as id, a.customer_id, count(*) as changes
    from ordered o join agents a on a.id = o.agent_id
    where o.recent and o.previous is not null and (${down('o.type')}) <> (${down('o.previous')})
    group by o.agent_id, a.customer_id
    having count(*) >= ${FLAP_CHANGES}`.execute(db);
  return rows.map((r) => ({ ...r, changes: Number(r.changes) }));
}

/** When the earliest check in a rule's states but not yet past its for_seconds will be (ms since the epoch). */
async function nextCheckDue(db: Kysely<Database>, rule: ActiveRule<'check_state'>, now: Date): Promise<number | null> {
  const codes = rule.params.states.map((st) => ({ warning: 1, critical: 2, unknown: 3 })[st]);
  const ms = rule.params.for_seconds * 1000;
  const row = await db
    .selectFrom('check_states')
    .select((eb) => eb.fn.min('last_change_at').as('first'))
    .where('state', 'in', codes)
    .where('last_change_at', '>', new Date(now.getTime() - ms))
    .executeTakeFirst();
  return row?.first ? new Date(row.first).getTime() + ms : null;
}
