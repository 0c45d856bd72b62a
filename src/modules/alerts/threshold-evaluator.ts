// Metric threshold rules (issue 31), evaluated from the samples each heartbeat already yields (no second
// parse of the system data, no query per heartbeat): after a heartbeat batch commits, each sample a
// rule watches moves that rule's (agent, label) state: crossing since when, back past the recovery
// threshold since when. It fires once every sample has crossed for `for_seconds`, and resolves once
// every sample has been back past the recovery threshold for `recovery_seconds` (hysteresis: between
// the two thresholds nothing changes). The state lives in memory and, on every change, in
// alert_conditions, so a restart continues where it was. Only changes touch the database; a steady
// heartbeat costs a few comparisons per rule.
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

const keyOf = (ruleId: number, agentId: string, label: string) => `${ruleId}\u0000${agentId}\u0000${label}`;

export class ThresholdEvaluator {
  #rules: ThresholdRule[] | null = null;
  #state = new Map<string, State>();
  #queue: Promise<void> = Promise.resolve();
  /** Observed heartbeats not yet taken by a pass. */
  #waiting: ObservedHeartbeat[] = [];

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
    const key = keyOf(alert.rule_id, alert.agent_id, alert.label);
    this.#queue = this.#queue.then(async () => {
      if (!this.#state.delete(key)) return;
      await deleteConditions(this.db, [{ ruleId: alert.rule_id!, agentId: alert.agent_id, label: alert.label }]).catch((err: unknown) =>
        this.logger.error({ err }, 'threshold state not cleared'),
      );
    });
  }

  /**
   * Takes a committed batch; evaluation runs after the heartbeats were answered, in arrival order.
   * Batches that arrive while a pass runs wait together and are evaluated in one pass: under load the
   * heartbeat writer commits many small batches, and one pass per batch (its state writes and its
   * alert transaction) fell behind ingest (issue 31's bench: 605 heartbeats/s evaluated of 900 taken).
   */
  observe(batch: readonly ObservedHeartbeat[]): void {
    const scheduled = this.#waiting.length > 0;
    this.#waiting.push(...batch);
    if (!scheduled) this.#schedulePass();
  }

  #schedulePass(): void {
    this.#queue = this.#queue
      .then(() => {
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
        this.logger.error({ err }, 'threshold evaluation failed for a heartbeat batch; state reloaded from the database');
      });
  }

  /** Resolves when every batch observed so far has been evaluated (tests, shutdown). */
  idle(): Promise<void> {
    return this.#queue;
  }

  async #process(batch: readonly ObservedHeartbeat[]): Promise<void> {
    const rules = await this.#loadedRules();
    if (rules.length === 0) return;
    const transitions: Transition[] = [];
    for (const hb of batch) {
      const agent = { id: hb.agentId, customer_id: hb.customerId };
      for (const rule of rules) {
        if (!ruleCovers(rule, agent)) continue;
        for (const sample of hb.samples) {
          if (sample.metric !== rule.params.metric || (rule.params.label !== undefined && sample.label !== rule.params.label)) continue;
          this.#step(rule, hb.agentId, sample, hb.at, transitions);
        }
      }
    }
    if (transitions.length > 0) await this.#apply(transitions);
  }

  #step(rule: ThresholdRule, agentId: string, sample: ExtractedSample, at: Date, out: Transition[]): void {
    const p = rule.params;
    const key = keyOf(rule.id, agentId, sample.label);
    const before = this.#state.get(key) ?? { breaching: null, clearing: null, open: false };
    const next: State = { ...before };
    if (!before.open) {
      next.breaching = breaches(p, sample.value) ? (before.breaching ?? at) : null;
      if (next.breaching && at.getTime() - next.breaching.getTime() >= p.for_seconds * 1000) {
        next.open = true;
        out.push({ type: 'fire', rule, finding: findingOf(rule, agentId, sample, next.breaching) });
      }
    } else {
      next.clearing = recovered(p, sample.value) ? (before.clearing ?? at) : null;
      const recoverySeconds = p.recovery_seconds ?? p.for_seconds;
      if (next.clearing && at.getTime() - next.clearing.getTime() >= recoverySeconds * 1000) {
        out.push({ type: 'resolve', rule, agentId, label: sample.label });
        next.open = false;
        next.breaching = null;
        next.clearing = null;
      }
    }
    if (same(before, next)) return;
    if (!next.open && !next.breaching && !next.clearing) this.#state.delete(key);
    else this.#state.set(key, next);
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
      this.#state.set(keyOf(c.rule_id, c.agent_id, c.label), { breaching: c.breaching_since, clearing: c.clearing_since, open: c.open });
    }
    this.#rules = rules;
    return rules;
  }
}

function same(a: State, b: State): boolean {
  return a.open === b.open && a.breaching?.getTime() === b.breaching?.getTime() && a.clearing?.getTime() === b.clearing?.getTime();
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
