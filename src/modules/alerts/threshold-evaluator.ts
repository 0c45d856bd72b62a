// Metric threshold rules (issue 31), evaluated from the samples each heartbeat already yields (no second
// parse of the system data, no query per heartbeat): after a heartbeat batch commits, each sample a
// rule watches moves that rule's (agent, label) state: crossing since when, back past the recovery
// threshold since when. It fires once every sample has crossed for `for_seconds`, and resolves once
// every sample has been back past the recovery threshold for `recovery_seconds` (hysteresis: between
// the two thresholds nothing changes). The state lives in memory and, on every change, in
// alert_conditions, so a restart continues where it was. Only changes touch the database; a steady
// heartbeat costs a few comparisons per rule.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Logger } from '../../platform/logger.js';
import type { ExtractedSample } from '../metrics/extract-samples.js';
import { enabledRules, ruleCovers, type ActiveRule } from './active-rules.repo.js';
import type { AlertEngine, Finding } from './alert-engine.js';
import type { AlertKey, AlertRow } from './alerts.repo.js';
import { deleteConditions, loadConditions, saveConditions, type ConditionRow } from './conditions.repo.js';
import { utc } from './periodic-conditions.js';
import { breaches, recovered } from './rule-params.js';
import { describeMetric } from './metric-words.js';
import { logFailure } from '../../db/db-errors.js';

type ThresholdRule = ActiveRule<'metric_threshold'>;

export interface ObservedHeartbeat {
  agentId: string;
  customerId: number | null;
  at: Date;
  samples: readonly ExtractedSample[];
}

interface State {
  breaching: Date | null;
  clearing: Date | null;
  open: boolean;
}

type Transition =
  | { type: 'save'; ruleId: number; agentId: string; label: string; state: State }
  | { type: 'fire'; rule: ThresholdRule; finding: Finding }
  | { type: 'resolve'; rule: ThresholdRule; agentId: string; label: string };

/** Most heartbeats one evaluation pass takes. */
const MAX_PASS = 2_000;
/**
 * Least time from the start of a pass that wrote something to the start of the next pass. Such a pass
 * costs about ten statements whatever its size (states, agents, the alert transaction), so under churn
 * the batches of 100 ms are judged together: at most ten writing passes a second however many heartbeats
 * arrive. A pass that only compared (nothing changed) is not waited for. An alert is at most that much
 * later; a threshold's duration is counted from the heartbeats' own times, not the pass's.
 */
const PASS_SPACING_MS = 100;

/** A sample's place in a rule's states: one agent's one label. */
const sampleKey = (agentId: string, label: string) => `${agentId}\u0000${label}`;

export class ThresholdEvaluator {
  #rules: ThresholdRule[] | null = null;
  /** The enabled rules by the metric they watch: a sample is compared with its metric's rules only. */
  #byMetric = new Map<string, ThresholdRule[]>();
  /** Per rule, the states that are not idle (crossing, clearing or open), by sampleKey. */
  #state = new Map<number, Map<string, State>>();
  #queue: Promise<void> = Promise.resolve();
  /** Observed heartbeats not yet taken by a pass. */
  #waiting: ObservedHeartbeat[] = [];
  /** When the last pass that wrote to the database started (performance.now()). */
  #lastWriteAt = -Infinity;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
    private readonly engine: AlertEngine,
  ) {}

  /** Rules were created, changed or deleted: reload them (and their state) before the next batch. */
  rulesChanged(): void {
    this.#queue = this.#queue.then(() => {
      this.#rules = null;
    });
  }

  /** An alert of a threshold rule was resolved by hand: watch its samples afresh. */
  forget(alert: Pick<AlertRow, 'rule_id' | 'agent_id' | 'label'>): void {
    if (alert.rule_id === null) return;
    const key = sampleKey(alert.agent_id, alert.label);
    this.#queue = this.#queue.then(async () => {
      if (!this.#state.get(alert.rule_id!)?.delete(key)) return;
      await deleteConditions(this.db, [{ ruleId: alert.rule_id!, agentId: alert.agent_id, label: alert.label }]).catch((err: unknown) =>
        logFailure(this.logger, err, {}, 'threshold state not cleared'),
      );
    });
  }

  /**
   * Takes a committed batch; evaluation runs after the heartbeats were answered, in arrival order.
   * Batches that arrive while a pass runs, or within PASS_SPACING_MS of its start, wait together and are
   * evaluated in one pass: under load the heartbeat writer commits many small batches, and one pass per
   * batch (its state writes and its alert transaction) fell behind ingest (issue 31's bench: 605
   * heartbeats/s evaluated of 900 taken).
   */
  observe(batch: readonly ObservedHeartbeat[]): void {
    const scheduled = this.#waiting.length > 0;
    this.#waiting.push(...batch);
    if (!scheduled) this.#schedulePass();
  }

  #schedulePass(): void {
    this.#queue = this.#queue
      .then(async () => {
        const wait = this.#lastWriteAt + PASS_SPACING_MS - performance.now();
        if (wait > 0) await sleep(wait);
        const pass = this.#waiting.splice(0, MAX_PASS);
        // More than a pass's worth (MAX_PASS bounds its statements): the rest goes in the next pass.
        if (this.#waiting.length > 0) this.#schedulePass();
        return this.#process(pass);
      })
      .catch((err: unknown) => {
        // The database failed midway (e.g. it restarted): memory may now say more than was stored, so
        // the next batch starts again from what the database holds (a crossing may then need its
        // duration anew, but no alert is believed fired that was not).
        this.#rules = null;
        logFailure(this.logger, err, {}, 'threshold evaluation failed for a heartbeat batch; state reloaded from the database');
      });
  }

  /** Resolves when every batch observed so far has been evaluated (tests, shutdown). */
  idle(): Promise<void> {
    return this.#queue;
  }

  async #process(batch: readonly ObservedHeartbeat[]): Promise<void> {
    const startedAt = performance.now();
    const rules = await this.#loadedRules();
    if (rules.length === 0) return;
    const transitions: Transition[] = [];
    for (const hb of batch) {
      const agent = { id: hb.agentId, customer_id: hb.customerId };
      for (const sample of hb.samples) {
        const watching = this.#byMetric.get(sample.metric);
        if (!watching) continue;
        let key: string | undefined;
        for (const rule of watching) {
          if ((rule.params.label !== undefined && sample.label !== rule.params.label) || !ruleCovers(rule, agent)) continue;
          key ??= sampleKey(hb.agentId, sample.label);
          this.#step(rule, key, hb.agentId, sample, hb.at, transitions);
        }
      }
    }
    if (transitions.length === 0) return;
    this.#lastWriteAt = startedAt;
    await this.#apply(transitions);
  }

  /**
   * Moves one rule's state for one sample. Called for every watched sample of every heartbeat, so the
   * steady cases (idle and not crossing; crossing and still crossing; open and not recovering) return
   * without allocating anything.
   */
  #step(rule: ThresholdRule, key: string, agentId: string, sample: ExtractedSample, at: Date, out: Transition[]): void {
    const p = rule.params;
    let states = this.#state.get(rule.id);
    const before = states?.get(key);
    let next: State;
    if (!before?.open) {
      const crossing = breaches(p, sample.value);
      if (!crossing && !before) return;
      const since = crossing ? (before?.breaching ?? at) : null;
      if (since && at.getTime() - since.getTime() >= p.for_seconds * 1000) {
        next = { breaching: since, clearing: null, open: true };
        out.push({ type: 'fire', rule, finding: findingOf(rule, agentId, sample, since) });
      } else if (since === before?.breaching) {
        return;
      } else {
        next = { breaching: since, clearing: null, open: false };
      }
    } else {
      const clearing = recovered(p, sample.value) ? (before.clearing ?? at) : null;
      const recoverySeconds = p.recovery_seconds ?? p.for_seconds;
      if (clearing && at.getTime() - clearing.getTime() >= recoverySeconds * 1000) {
        out.push({ type: 'resolve', rule, agentId, label: sample.label });
        next = { breaching: null, clearing: null, open: false };
      } else if (clearing === before.clearing) {
        return;
      } else {
        next = { breaching: before.breaching, clearing, open: true };
      }
    }
    if (!next.open && !next.breaching) {
      states?.delete(key);
    } else {
      if (!states) this.#state.set(rule.id, (states = new Map()));
      states.set(key, next);
    }
    out.push({ type: 'save', ruleId: rule.id, agentId, label: sample.label, state: next });
  }

  /** A batch's changes: its states in two statements, then its alerts fired and resolved in one transaction. */
  async #apply(transitions: readonly Transition[]): Promise<void> {
    const saves: ConditionRow[] = [];
    const clears: ConditionRow[] = [];
    const fires = new Map<ThresholdRule, Finding[]>();
    const resolves: AlertKey[] = [];
    for (const t of transitions) {
      if (t.type === 'save') {
        const row = { ruleId: t.ruleId, agentId: t.agentId, label: t.label, breaching: t.state.breaching, clearing: t.state.clearing };
        (!t.state.open && !t.state.breaching && !t.state.clearing ? clears : saves).push(row);
      } else if (t.type === 'fire') {
        fires.set(t.rule, [...(fires.get(t.rule) ?? []), t.finding]);
      } else {
        resolves.push({ ruleId: t.rule.id, agentId: t.agentId, label: t.label });
      }
    }
    await saveConditions(this.db, saves);
    await deleteConditions(this.db, clears);
    await this.engine.change([...fires].map(([rule, findings]) => ({ rule, findings })), resolves);
  }

  async #loadedRules(): Promise<ThresholdRule[]> {
    if (this.#rules) return this.#rules;
    const rules = await enabledRules(this.db, 'metric_threshold', (ruleId, err) => this.logger.error({ err, rule_id: ruleId }, 'alert rule skipped: its params do not fit its kind'));
    this.#state = new Map();
    for (const c of await loadConditions(this.db, rules.map((r) => r.id))) {
      let states = this.#state.get(c.rule_id);
      if (!states) this.#state.set(c.rule_id, (states = new Map()));
      states.set(sampleKey(c.agent_id, c.label), { breaching: c.breaching_since, clearing: c.clearing_since, open: c.open });
    }
    this.#byMetric = new Map();
    for (const rule of rules) this.#byMetric.set(rule.params.metric, [...(this.#byMetric.get(rule.params.metric) ?? []), rule]);
    this.#rules = rules;
    return rules;
  }
}

function findingOf(rule: ThresholdRule, agentId: string, sample: ExtractedSample, since: Date): Finding {
  const p = rule.params;
  const what = describeMetric(p.metric, sample.label);
  const minutes = Math.round(p.for_seconds / 6) / 10;
  return {
    agentId,
    label: sample.label,
    summary: `${what.name} is ${what.format(sample.value)} (${p.operator} ${what.format(p.threshold)}) since ${utc(since)}${p.for_seconds > 0 ? `, for at least ${minutes} min` : ''}`,
    value: sample.value,
    threshold: p.threshold,
    since,
  };
}
