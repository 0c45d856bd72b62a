// Evaluation of the rules that run on a timer (issue 31). The offline rule rides on the status monitor:
// after each of its passes, flapping agents are found (4 or more flips up or down in 15 minutes: one
// notice, then quiet until 15 minutes without a change), then each offline rule is reconciled. The
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
    const flapping = await this.#flappingAgents(now);
    for (const rule of rules) {
      const quiet = await this.#updateFlapping(rule, flapping, now);
      await this.reconcile(rule, await PERIODIC_CONDITIONS.agent_offline(this.db, rule, now), quiet);
    }
  }

  /** The timer's pass: alerts of rules switched off, certificates, backups, pending updates, then reminders. */
  async runPeriodic(): Promise<void> {
    for (const [ruleId, alerts] of await openAlertsOfDisabledRules(this.db)) {
      await this.engine.resolve(ruleId, alerts, null, 'the rule was disabled');
    }
    const now = this.clock.now();
    for (const kind of ['certificate_expiry', 'backup_age', 'update_pending'] as const) {
      for (const rule of await this.#rules(kind)) {
        const condition = PERIODIC_CONDITIONS[kind] as (db: Kysely<Database>, r: ActiveRule, at: Date) => Promise<Finding[]>;
        await this.reconcile(rule, await condition(this.db, rule, now));
      }
    }
    await this.engine.remind();
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
   * Agents that went up or down often enough in the last 15 minutes, with their customer and the count.
   * A flip is coming online, or leaving online; stale → offline is one outage going on, not a flip.
   */
  async #flappingAgents(now: Date): Promise<Array<{ id: string; customer_id: number | null; changes: number }>> {
    const { rows } = await sql<{ id: string; customer_id: number | null; changes: string }>`
      select e.agent_id as id, a.customer_id, count(*) as changes
      from (select agent_id, type, lag(type) over (partition by agent_id order by created_at, id) as previous
            from agent_events
            where created_at > ${new Date(now.getTime() - FLAP_WINDOW_MS)} and type in ${STATUS_EVENTS}) e
      join agents a on a.id = e.agent_id
      where e.type = 'online' or e.previous = 'online' or e.previous is null
      group by e.agent_id, a.customer_id
      having count(*) >= ${FLAP_CHANGES}`.execute(this.db);
    return rows.map((r) => ({ ...r, changes: Number(r.changes) }));
  }

  /**
   * Fires the flapping notice for newly flapping agents the rule covers and resolves it for agents
   * stable for 15 minutes; returns the agents still flapping, whose alerts notify nobody.
   */
  async #updateFlapping(rule: ActiveRule, flapping: ReadonlyArray<{ id: string; customer_id: number | null; changes: number }>, now: Date): Promise<Set<string>> {
    const open = [...(await openAlertsOfRule(this.db, rule.id)).values()].filter((a) => a.label === FLAPPING_LABEL);
    const covered = flapping.filter((agent) => ruleCovers(rule, agent));
    const findings: Finding[] = covered.map((agent) => ({
      agentId: agent.id,
      label: FLAPPING_LABEL,
      summary: `Flapping: went up or down ${agent.changes} times in 15 minutes; its further changes are not notified until it has been stable for 15 minutes`,
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
