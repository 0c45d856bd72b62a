// Alert rules (issue 31): CRUD with the scope rules of alert-scope.ts, params checked and stored with
// their kind's defaults (rule-params.ts), and channel checks: a rule may name only channels the caller
// can use that are global or of the rule's customer (its agent's customer for an agent rule), because a
// customer's alerts must never reach another customer's receivers. Evaluators learn of every change
// through hooks.changed(); a rule's open alerts are resolved (hooks.beforeDelete) before it goes.
import type { Kysely } from 'kysely';
import { isForeignKeyViolation } from '../../db/db-errors.js';
import type { AlertRuleKind, Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError, type ErrorDetail } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { scopeAllows, scopeOf, type Caller } from '../auth/caller.js';
import { assertChangeable, canSee, resolveScope, type ResolvedScope } from './alert-scope.js';
import * as repo from './alert-rules.repo.js';
import { RULE_PARAMS } from './rule-params.js';

export interface AlertRuleHooks {
  /** Called after any rule is created, changed or deleted, so evaluators reload their rules. */
  changed(): void;
  /** Called before a rule is deleted: resolves its open alerts by hand (`by` = the caller's name). */
  beforeDelete(ruleId: number, by: string): Promise<void>;
}

export type AlertRule = repo.RuleRow;
export type AlertRuleFilter = Omit<repo.RuleFilter, 'scope'>;

/** What POST and PUT take: the whole rule (PUT replaces every field; kind cannot change). */
export interface AlertRuleInput {
  name: string;
  kind: AlertRuleKind;
  enabled?: boolean | undefined;
  customer_id?: number | null | undefined;
  agent_id?: string | null | undefined;
  params?: unknown;
  channel_ids?: readonly number[] | undefined;
  reminder_minutes?: number | null | undefined;
}

export const MAX_RULE_CHANNELS = 20;
const WHAT = 'Alert rule';

const invalid = (details: ErrorDetail[]) => new AppError('VALIDATION_ERROR', `${details[0]!.path}: ${details[0]!.message}`, { details });

export class AlertRuleService {
  constructor(
    readonly db: Kysely<Database>,
    readonly clock: Clock,
    readonly hooks: AlertRuleHooks,
  ) {}

  /** Rules the caller can see (a scoped key: its customer's, its agents' and the global ones), by id. */
  list(caller: Caller, filter: AlertRuleFilter, page: PageRequest): Promise<Page<AlertRule>> {
    return repo.listRules(this.db, { ...filter, scope: scopeOf(caller) }, page);
  }

  async get(caller: Caller, id: number): Promise<AlertRule> {
    const rule = await repo.findRule(this.db, id);
    if (!rule || !canSee(caller, rule)) throw new AppError('NOT_FOUND', `${WHAT} not found`);
    return rule;
  }

  async create(caller: Caller, input: AlertRuleInput): Promise<AlertRule> {
    const { values, channelIds } = await this.prepare(caller, input);
    const id = await this.write(async (trx) => {
      const ruleId = await repo.insertRule(trx, values, this.clock.now());
      await repo.replaceRuleChannels(trx, ruleId, channelIds);
      return ruleId;
    });
    this.hooks.changed();
    return this.get(caller, id);
  }

  /** Replaces the whole rule; 400 when the kind differs, 403 for a global rule and a scoped key. */
  async update(caller: Caller, id: number, input: AlertRuleInput): Promise<AlertRule> {
    const existing = await repo.findRule(this.db, id);
    if (!existing) throw new AppError('NOT_FOUND', `${WHAT} not found`);
    assertChangeable(caller, existing, WHAT);
    if (input.kind !== existing.kind) {
      throw invalid([{ path: 'kind', message: `cannot change (the rule is ${existing.kind}); create a new rule instead` }]);
    }
    const { values, channelIds } = await this.prepare(caller, input);
    const updated = await this.write(async (trx) => {
      if (!(await repo.updateRule(trx, id, values, this.clock.now()))) return false;
      await repo.replaceRuleChannels(trx, id, channelIds);
      return true;
    });
    if (!updated) throw new AppError('NOT_FOUND', `${WHAT} not found`);
    this.hooks.changed();
    return this.get(caller, id);
  }

  /** Resolves the rule's open alerts by hand (named after the caller), then deletes it. */
  async delete(caller: Caller, id: number): Promise<void> {
    const existing = await repo.findRule(this.db, id);
    if (!existing) throw new AppError('NOT_FOUND', `${WHAT} not found`);
    assertChangeable(caller, existing, WHAT);
    await this.hooks.beforeDelete(id, caller.kind === 'user' ? caller.username : caller.name);
    await repo.deleteRule(this.db, id);
    this.hooks.changed();
  }

  /** Checks everything a rule refers to and applies the defaults; throws the first problem found. */
  private async prepare(caller: Caller, input: AlertRuleInput): Promise<{ values: repo.RuleValues; channelIds: number[] }> {
    const parsed = RULE_PARAMS[input.kind].safeParse(input.params ?? {});
    if (!parsed.success) {
      throw invalid(parsed.error.issues.map((issue) => ({ path: ['params', ...issue.path.map(String)].join('.'), message: issue.message })));
    }
    const name = input.name.trim();
    if (name.length < 1 || name.length > 100) throw invalid([{ path: 'name', message: 'must be 1 to 100 characters' }]);
    const reminder = input.reminder_minutes ?? null;
    if (reminder !== null && (!Number.isInteger(reminder) || reminder < 5 || reminder > 10_080)) {
      throw invalid([{ path: 'reminder_minutes', message: 'must be null (no reminders) or 5 to 10080 minutes' }]);
    }
    const scope = await resolveScope(this.db, caller, input, WHAT);
    const channelIds = await this.checkChannels(caller, input.channel_ids ?? [], scope);
    const values: repo.RuleValues = {
      name,
      kind: input.kind,
      enabled: input.enabled ?? true,
      customer_id: scope.customer_id,
      agent_id: scope.agent_id,
      params: parsed.data as Record<string, unknown>,
      reminder_minutes: reminder,
    };
    return { values, channelIds };
  }

  /**
   * The channel ids without repeats, each existing, usable by the caller (a scoped key: only its
   * customer's) and global or of the rule's customer; 400 naming each that is not.
   */
  private async checkChannels(caller: Caller, ids: readonly number[], scope: ResolvedScope): Promise<number[]> {
    const unique = [...new Set(ids)];
    if (unique.length > MAX_RULE_CHANNELS) throw invalid([{ path: 'channel_ids', message: `at most ${MAX_RULE_CHANNELS} channels` }]);
    const found = new Map((await repo.findChannels(this.db, unique)).map((c) => [c.id, c.customer_id]));
    const callerScope = scopeOf(caller);
    const owner = scope.owner_customer_id;
    const problems: ErrorDetail[] = [];
    for (const id of unique) {
      const path = `channel_ids.${ids.indexOf(id)}`;
      const customer = found.get(id);
      if (customer === undefined || (callerScope !== null && !scopeAllows(callerScope, customer))) {
        problems.push({ path, message: `channel ${id} not found among the channels this caller can use` });
      } else if (customer !== null && customer !== owner) {
        const rule = owner === null ? (scope.agent_id ? 'a rule of an agent without a customer' : 'a global rule') : `a rule of customer ${owner}`;
        problems.push({ path, message: `channel ${id} belongs to customer ${customer}; ${rule} can use only global channels${owner === null ? '' : ' and that customer’s'}` });
      }
    }
    if (problems.length > 0) throw invalid(problems);
    return unique.sort((a, b) => a - b);
  }

  /** Runs the writes in one transaction; a customer, agent or channel deleted meanwhile is a 409. */
  private async write<T>(work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction().execute(work);
    } catch (err) {
      if (isForeignKeyViolation(err)) throw new AppError('CONFLICT', 'The customer, agent or a channel of the rule was deleted meanwhile; check and send it again');
      throw err;
    }
  }
}
