// Checks and policies as the API offers them (issue 61). Policies are server-wide: they name customers,
// so only unscoped callers read or change them (a customer-scoped caller sees its agents' checks through
// the agents). An agent's checks, their history and its overrides follow the agent's customer scope.
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/db-errors.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { requireUnscoped, scopeOf, type Caller } from '../auth/caller.js';
import type { AgentService } from '../agents/agents.service.js';
import { CHECK_CAPABILITY, checkParams, type CheckKind } from './check-protocol.js';
import type { CheckSets } from './check-sets.js';
import * as states from './check-states.repo.js';
import type { EffectiveCheck } from './effective-checks.js';
import * as repo from './policies.repo.js';
import type { PolicyBody } from './policies.schemas.js';

const notFound = (what = 'Policy') => new AppError('NOT_FOUND', `${what} not found`);
const duplicate = (err: unknown) => (isUniqueViolation(err) ? new AppError('CONFLICT', 'A policy of that name exists (names ignore case)') : err);

export interface AgentChecks {
  agentId: string;
  supported: boolean;
  version: string;
  checks: Array<EffectiveCheck & { state: states.CheckStateRow | undefined }>;
}

export interface OverrideInput {
  excluded: boolean;
  params: Record<string, unknown>;
  interval_seconds: number | null;
}

export class CheckService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly agents: AgentService,
    private readonly sets: CheckSets,
  ) {}

  list(caller: Caller, page: PageRequest): Promise<Page<repo.StoredPolicy>> {
    requireUnscoped(caller);
    return repo.listPolicies(this.db, page, scopeOf(caller));
  }

  async get(caller: Caller, id: number): Promise<repo.StoredPolicy> {
    requireUnscoped(caller);
    return (await repo.findPolicy(this.db, id, scopeOf(caller))) ?? Promise.reject(notFound());
  }

  async create(caller: Caller, body: PolicyBody): Promise<repo.StoredPolicy> {
    requireUnscoped(caller);
    await this.#checkReferences(body);
    const id = await repo.savePolicy(this.db, null, body, this.clock.now()).catch((err: unknown) => Promise.reject(duplicate(err)));
    this.#changed();
    return this.get(caller, id!);
  }

  async update(caller: Caller, id: number, body: PolicyBody): Promise<repo.StoredPolicy> {
    requireUnscoped(caller);
    await this.#checkReferences(body);
    const saved = await repo.savePolicy(this.db, id, body, this.clock.now()).catch((err: unknown) => Promise.reject(duplicate(err)));
    if (saved === undefined) throw notFound();
    this.#changed();
    return this.get(caller, id);
  }

  async delete(caller: Caller, id: number): Promise<void> {
    requireUnscoped(caller);
    if (!(await repo.deletePolicy(this.db, id))) throw notFound();
    this.#changed();
  }

  /** The agent's effective set as computed now, with each check's latest state. */
  async agentChecks(caller: Caller, agentId: string): Promise<AgentChecks> {
    const agent = await this.agents.get(caller, agentId);
    const set = await this.sets.effectiveOf({ id: agent.id, customerId: agent.customer_id, tagKeys: agent.tags.map((t) => t.toLowerCase()), platform: agent.platform });
    const latest = await states.statesOf(this.db, agent.id);
    return {
      agentId: agent.id,
      supported: (agent.capabilities ?? []).includes(CHECK_CAPABILITY),
      version: set.version,
      checks: set.checks.map((c) => ({ ...c, state: latest.get(c.id) })),
    };
  }

  async history(caller: Caller, agentId: string, checkId: string, page: PageRequest) {
    await this.agents.get(caller, agentId);
    return states.historyOf(this.db, agentId, checkId, page);
  }

  async overrides(caller: Caller, agentId: string) {
    await this.agents.get(caller, agentId);
    return states.overridesList(this.db, agentId);
  }

  async setOverride(caller: Caller, agentId: string, checkId: string, input: OverrideInput): Promise<void> {
    await this.agents.get(caller, agentId);
    const check = await repo.findCheck(this.db, checkId);
    if (!check) throw notFound('Check');
    // The merged params must still be valid for the check's kind (a threshold of the wrong type is a 400 now, not on the device).
    const merged = checkParams[check.kind as CheckKind].safeParse({ ...check.params, ...input.params });
    if (!merged.success) {
      const issue = merged.error.issues[0]!;
      throw new AppError('VALIDATION_ERROR', `params.${issue.path.join('.')}: ${issue.message}`);
    }
    await repo.saveOverride(this.db, agentId, checkId, { excluded: input.excluded, params: input.params, intervalSeconds: input.interval_seconds }, this.clock.now());
    this.#changed();
  }

  async deleteOverride(caller: Caller, agentId: string, checkId: string): Promise<void> {
    await this.agents.get(caller, agentId);
    if (!(await repo.deleteOverride(this.db, agentId, checkId))) throw notFound('Override');
    this.#changed();
  }

  failing(caller: Caller, filter: { customerId?: number | undefined }, page: PageRequest) {
    return states.failingChecks(this.db, { ...filter, scope: scopeOf(caller) }, page);
  }

  async #checkReferences(body: PolicyBody): Promise<void> {
    const customers = [...new Set(body.customer_ids)];
    if (customers.length > 0) {
      const found = new Set((await this.db.selectFrom('customers').select('id').where('id', 'in', customers).execute()).map((r) => r.id));
      const missing = customers.find((id) => !found.has(id));
      if (missing !== undefined) throw new AppError('VALIDATION_ERROR', `customer_ids: no customer ${missing}`);
    }
    const scripts = [...new Set(body.checks.flatMap((c) => (typeof c.params.script_id === 'number' ? [c.params.script_id] : [])))];
    if (scripts.length > 0) {
      const found = new Set((await this.db.selectFrom('scripts').select('id').where('id', 'in', scripts).execute()).map((r) => r.id));
      const missing = scripts.find((id) => !found.has(id));
      if (missing !== undefined) throw new AppError('VALIDATION_ERROR', `checks: params.script_id: no script ${missing}`);
    }
  }

  /** This instance's agents get their new sets at once; other instances see the revision within seconds. */
  #changed(): void {
    this.sets.pollSoon();
  }
}
