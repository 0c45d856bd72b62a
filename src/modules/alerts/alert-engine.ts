// The alert engine (issue 31): fires and resolves alerts for what the evaluators found, and queues their
// notifications in the outbox in the same transaction, so an alert never exists without its
// notifications nor the reverse. Alerts that begin inside a maintenance window, or for an agent whose
// flapping was already announced, are recorded as suppressed and notify nobody, their resolution
// included. Works on batches: a pass over 10,000 agents is a few statements, not one per agent.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { NotificationEvent, NotificationItem } from '../notifications/notification-message.js';
import { enqueue } from '../notifications/outbox.repo.js';
import * as repo from './alerts.repo.js';
import { channelsOfRules, type ActiveRule } from './active-rules.repo.js';

/** Something an evaluator found wrong with one agent (and label) under one rule. */
export interface Finding {
  agentId: string;
  label: string;
  summary: string;
  value: number | null;
  threshold: number | null;
  /** When the condition began. */
  since: Date;
}

export interface WindowMatcher {
  covers(agent: { id: string; customer_id: number | null }): { id: number; name: string } | null;
}

export interface AlertEngineDeps {
  db: Kysely<Database>;
  clock: Clock;
  logger: Logger;
  /** The maintenance windows, read once per batch and then decided at any time in memory. */
  windows(): Promise<(at: Date) => WindowMatcher>;
  /**
   * The console's base URL for links, or null when none is configured. Read before a transaction opens,
   * never inside one: it may read the settings through the pool, and embedded PGlite has one connection,
   * which the open transaction holds (it would wait for itself forever).
   */
  consoleUrl(): Promise<string | null>;
  /** Tells the dispatcher that notifications were queued. */
  queued(): void;
  /** Tells the threshold evaluator that an alert was resolved by hand, so it watches afresh. */
  resolvedByHand?(alert: repo.AlertRow): void;
}

const INSERT_CHUNK = 500;

/** Findings of one rule to fire; `quiet` agents' alerts are recorded suppressed. */
export interface Firing {
  rule: ActiveRule;
  findings: readonly Finding[];
  quiet?: ReadonlySet<string>;
}

export class AlertEngine {
  constructor(private readonly deps: AlertEngineDeps) {}

  /** Fires an alert per finding that has none open; `quiet` agents' alerts are recorded suppressed. Returns the new alerts. */
  async fire(rule: ActiveRule, findings: readonly Finding[], quiet: ReadonlySet<string> = new Set()): Promise<repo.AlertRow[]> {
    return (await this.change([{ rule, findings, quiet }])).fired;
  }

  /**
   * A batch's changes across rules in one transaction: fires the findings and resolves the open alerts
   * named by key (automatically). Its reads (agents, windows, channels) are one statement each whatever
   * the number of rules, so a heartbeat batch that moves ten rules costs what one rule costs.
   */
  async change(firings: readonly Firing[], resolving: readonly repo.AlertKey[] = []): Promise<{ fired: repo.AlertRow[]; resolved: repo.AlertRow[] }> {
    const findings = firings.flatMap((f) => f.findings);
    if (findings.length === 0 && resolving.length === 0) return { fired: [], resolved: [] };
    const { db, clock } = this.deps;
    const now = clock.now();
    const contexts = await repo.agentContexts(db, [...findings.map((f) => f.agentId), ...resolving.map((k) => k.agentId)]);
    const rows = findings.length === 0 ? [] : this.#newAlerts(firings, contexts, await this.deps.windows(), now);
    const base = await this.deps.consoleUrl();
    const outcome = await db.transaction().execute(async (trx) => {
      const fired: repo.AlertRow[] = [];
      for (let i = 0; i < rows.length; i += INSERT_CHUNK) fired.push(...(await repo.insertAlerts(trx, rows.slice(i, i + INSERT_CHUNK))));
      const resolved = await repo.resolveOpenAlerts(trx, resolving, now);
      await this.#notify(trx, [
        { alerts: fired, event: 'firing' },
        { alerts: resolved, event: 'resolved' },
      ], now, contexts, base);
      return { fired, resolved };
    });
    return outcome;
  }

  /** Resolves open alerts (automatically when `by` is null); `quiet` agents' resolutions notify nobody. Returns those it resolved. */
  async resolve(
    ruleId: number | null,
    alerts: readonly repo.AlertRow[],
    by: string | null = null,
    comment: string | null = null,
    quiet: ReadonlySet<string> = new Set(),
  ): Promise<repo.AlertRow[]> {
    if (alerts.length === 0) return [];
    const { db, clock } = this.deps;
    const now = clock.now();
    const contexts = await repo.agentContexts(db, alerts.map((a) => a.agent_id));
    const base = await this.deps.consoleUrl();
    const resolved = await db.transaction().execute(async (trx) => {
      const done = await repo.resolveAlerts(trx, alerts.map((a) => a.id), now, by, comment);
      if (ruleId !== null) await this.#notify(trx, [{ alerts: done.filter((a) => !quiet.has(a.agent_id)), event: 'resolved' }], now, contexts, base);
      return done;
    });
    if (by !== null) for (const alert of resolved) this.deps.resolvedByHand?.(alert);
    return resolved;
  }

  /** Queues a reminder for each alert still firing unacknowledged, and moves its next reminder on. */
  async remind(): Promise<number> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const due = await repo.dueReminders(db, now);
    if (due.length === 0) return 0;
    const contexts = await repo.agentContexts(db, due.map((a) => a.agent_id));
    const base = await this.deps.consoleUrl();
    for (const alert of due) {
      await db.transaction().execute(async (trx) => {
        await repo.setNextReminder(trx, alert.id, new Date(now.getTime() + (alert.reminder_minutes ?? 60) * 60_000));
        await this.#notify(trx, [{ alerts: [alert], event: 'reminder' }], now, contexts, base);
      });
    }
    return due.length;
  }

  #newAlerts(firings: readonly Firing[], contexts: Map<string, repo.AgentContext>, windowsAt: (at: Date) => WindowMatcher, now: Date): repo.NewAlert[] {
    const windowsNow = windowsAt(now);
    return firings.flatMap(({ rule, findings, quiet }) => {
      const reminderAt = rule.reminder_minutes ? new Date(now.getTime() + rule.reminder_minutes * 60_000) : null;
      return findings
        .filter((f) => contexts.has(f.agentId))
        .map((f) => {
          const context = contexts.get(f.agentId)!;
          const agent = { id: f.agentId, customer_id: context.customer?.id ?? null };
          // Began inside a window: when it fired, or when its condition began.
          const inWindow = windowsNow.covers(agent) ?? (f.since < now ? windowsAt(f.since).covers(agent) : null);
          return {
            rule_id: rule.id,
            rule_name: rule.name,
            kind: f.label === FLAPPING_LABEL ? 'flapping' : rule.kind,
            agent_id: f.agentId,
            label: f.label,
            suppressed: inWindow !== null || (quiet?.has(f.agentId) ?? false),
            summary: inWindow ? `${f.summary} (in maintenance window "${inWindow.name}")` : f.summary,
            value: f.value,
            threshold: f.threshold,
            since: f.since,
            fired_at: now,
            next_reminder_at: reminderAt,
          };
        });
    });
  }

  /** Queues one notification per loud alert and channel of its rule (suppressed alerts notify nobody). */
  async #notify(
    trx: Kysely<Database>,
    groups: ReadonlyArray<{ alerts: readonly repo.AlertRow[]; event: NotificationEvent }>,
    at: Date,
    contexts: Map<string, repo.AgentContext>,
    base: string | null,
  ): Promise<void> {
    const loud = groups.map((g) => ({ ...g, alerts: g.alerts.filter((a) => !a.suppressed && a.rule_id !== null) }));
    const ruleIds = [...new Set(loud.flatMap((g) => g.alerts.map((a) => a.rule_id!)))];
    if (ruleIds.length === 0) return;
    const channels = await channelsOfRules(trx, ruleIds);
    const rows = loud.flatMap(({ alerts, event }) =>
      alerts.flatMap((alert) => {
        const item = itemOf(alert, alert.kind === 'flapping' && event === 'firing' ? 'flapping' : event, at, contexts.get(alert.agent_id), base);
        return (channels.get(alert.rule_id!) ?? []).map((channelId) => ({ channelId, alertId: alert.id, event: item.event, payload: item }));
      }),
    );
    if (rows.length === 0) return;
    await enqueue(trx, rows, at);
    this.deps.queued();
  }
}

/** The label of the one notice about an agent that keeps changing state. */
export const FLAPPING_LABEL = '~flapping';

function itemOf(alert: repo.AlertRow, event: NotificationEvent, at: Date, context: repo.AgentContext | undefined, base: string | null): NotificationItem {
  const byHand = event === 'resolved' ? alert.resolved_by : event === 'acknowledged' ? alert.acknowledged_by : null;
  const comment = event === 'resolved' ? alert.resolve_comment : event === 'acknowledged' ? alert.ack_comment : null;
  return {
    event,
    alert_id: alert.id,
    rule_id: alert.rule_id,
    rule_name: alert.rule_name,
    kind: alert.kind,
    customer: context?.customer ?? null,
    agent: { id: alert.agent_id, name: context?.name ?? alert.agent_id, hostname: context?.hostname ?? '' },
    label: alert.label === FLAPPING_LABEL ? '' : alert.label,
    summary: alert.summary,
    value: alert.value,
    threshold: alert.threshold,
    since: alert.since.toISOString(),
    at: at.toISOString(),
    by: byHand,
    comment,
    link: base ? `${base}/agents/${encodeURIComponent(alert.agent_id)}` : null,
  };
}
