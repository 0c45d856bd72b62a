// Bulk actions (issue 33, Build 2): one action on the agents a caller picks (ids) or a filter matches
// (customer, platform, status, name, tag), resolved when the action is made and limited to the caller's
// scope. Connected agents run at once; the others wait (`waiting`) until they reconnect or the action's
// wait ends (default 24 h, then `not_connected`). The runner (bulk-runner.ts) does the work.
import type { Kysely } from 'kysely';
import type { Database, Platform } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import type { AgentStatus } from '../agents/agent-status.js';
import type { AgentService } from '../agents/agents.service.js';
import { actorOf, scopeAllows, scopeOf, type Caller } from '../auth/caller.js';
import { requestUpdateOf } from '../firmware/firmware.repo.js';
import { BULK_PARAMS, type BulkAction } from './bulk-kinds.js';
import * as repo from './bulk.repo.js';
import type { ScriptService } from '../scripts/scripts.service.js';
import { checkScriptPlatforms, supportedTargets, type PlatformCheck, type TargetAgent } from './script-platforms.js';

export const MAX_BULK_AGENTS = 5000;
const HOUR_MS = 3_600_000;
/** With no wait, the connected agents still need a moment to be claimed. */
const NO_WAIT_GRACE_MS = 60_000;

export interface BulkTarget {
  agent_ids?: string[] | undefined;
  all?: boolean | undefined;
  customer_id?: number | undefined;
  platform?: Platform | undefined;
  status?: AgentStatus | undefined;
  q?: string | undefined;
  tag?: string | undefined;
}

export interface NewBulkAction {
  action: BulkAction;
  params?: Record<string, unknown> | undefined;
  target: BulkTarget;
  wait_hours?: number | undefined;
  /** A script: run it on the agents of its platforms and leave the others out (else 400 naming them). */
  skip_unsupported?: boolean | undefined;
}

/** What an action would run on, before it is made (POST /bulk-actions/preview). */
export interface BulkPreview extends PlatformCheck {
  agents: number;
  platforms: Partial<Record<Platform | 'unknown', number>>;
}

export class BulkService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly agents: AgentService,
    private readonly commander: AgentCommander,
    private readonly scripts: Pick<ScriptService, 'get'>,
    /** Tells the runner to look for work now instead of at its next pass. */
    private readonly wake: () => void,
  ) {}

  /**
   * Makes the action. A group task's run (`origin`) leaves out the agents its script does not apply to:
   * its target is a filter meant as "where it applies", resolved anew at every run.
   */
  async create(caller: Caller, input: NewBulkAction, origin?: { actor_type: 'system'; actor: string; task_id: number }): Promise<repo.BulkActionRow> {
    const { params, targets: resolved } = await this.checked(caller, input);
    const targets = supportedTargets(resolved, await checkScriptPlatforms(this.scripts, input.action, params, resolved), input.skip_unsupported ?? origin !== undefined);
    const now = this.clock.now();
    const waitMs = (input.wait_hours ?? 24) * HOUR_MS;
    const noNeedToWait = input.action === 'request_update';
    if (noNeedToWait) await requestUpdateOf(this.db, targets.map((a) => a.id), now);
    const connected = new Set(targets.filter((a) => this.commander.isConnected(a.id)).map((a) => a.id));
    const action = {
      action: input.action,
      params,
      target: { ...input.target },
      scope_customer_id: ownerCustomerOf(caller, targets),
      ...(origin ? { actor_type: origin.actor_type, actor: origin.actor } : actorOf(caller)),
      task_id: origin?.task_id ?? null,
      created_at: now,
      expires_at: new Date(now.getTime() + Math.max(waitMs, NO_WAIT_GRACE_MS)),
    };
    const row = await repo.insertAction(this.db, action, targets, (agent) =>
      noNeedToWait
        ? { status: 'done', finished_at: now, error: null }
        : waitMs === 0 && !connected.has(agent.id)
          ? { status: 'not_connected', finished_at: now, error: 'The agent was not connected and the action does not wait' }
          : { status: 'waiting', finished_at: null, error: null },
    );
    this.wake();
    return row;
  }

  list(caller: Caller, page: PageRequest): Promise<Page<repo.BulkActionRow>> {
    return repo.listActions(this.db, scopeOf(caller), page);
  }

  async get(caller: Caller, id: number): Promise<{ action: repo.BulkActionRow; results: repo.BulkResultRow[] }> {
    const action = await repo.findAction(this.db, id);
    const scope = scopeOf(caller);
    if (!action || !scopeAllows(scope, action.scope_customer_id)) throw new AppError('NOT_FOUND', 'Bulk action not found');
    return { action, results: await repo.resultsOf(this.db, id) };
  }

  counts(ids: readonly number[]) {
    return repo.countsOf(this.db, ids);
  }

  /** The agents an action would run on, by platform, and those its script does not apply to. */
  async preview(caller: Caller, input: NewBulkAction): Promise<BulkPreview> {
    const { params, targets } = await this.checked(caller, input);
    const platforms: BulkPreview['platforms'] = {};
    for (const agent of targets) platforms[agent.platform ?? 'unknown'] = (platforms[agent.platform ?? 'unknown'] ?? 0) + 1;
    return { agents: targets.length, platforms, ...(await checkScriptPlatforms(this.scripts, input.action, params, targets)) };
  }

  /** The action's params, checked (400 naming the field), and its target resolved (400 when it matches nobody). */
  private async checked(caller: Caller, input: NewBulkAction): Promise<{ params: Record<string, unknown>; targets: TargetAgent[] }> {
    const parsed = BULK_PARAMS[input.action].safeParse(input.params ?? {});
    if (!parsed.success) {
      throw new AppError('VALIDATION_ERROR', 'Invalid params for this action', {
        details: parsed.error.issues.map((i) => ({ path: ['params', ...i.path].join('.'), message: i.message })),
      });
    }
    const targets = await this.resolve(caller, input.target);
    if (targets.length === 0) throw new AppError('VALIDATION_ERROR', 'No agents match the target', { details: [{ path: 'target', message: 'matches no agent' }] });
    return { params: parsed.data, targets };
  }

  /** Ends the results still waiting for their agent; those running finish. */
  async cancel(caller: Caller, id: number): Promise<number> {
    await this.get(caller, id);
    return repo.cancelWaiting(this.db, id, this.clock.now());
  }

  private async resolve(caller: Caller, target: BulkTarget): Promise<TargetAgent[]> {
    if (target.agent_ids !== undefined) {
      const ids = [...new Set(target.agent_ids)];
      const found = await this.agents.findMany(caller, ids);
      const missing = ids.filter((id) => !found.some((a) => a.id === id));
      if (missing.length > 0) throw new AppError('NOT_FOUND', `Agent(s) not found: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`);
      return found;
    }
    const filter = { customerId: target.customer_id, platform: target.platform, status: target.status, q: target.q, tag: target.tag };
    const page = await this.agents.list(caller, filter, { sort: 'name', descending: false }, { limit: MAX_BULK_AGENTS + 1, after: null });
    if (page.items.length > MAX_BULK_AGENTS) throw new AppError('VALIDATION_ERROR', `The target matches more than ${MAX_BULK_AGENTS} agents; narrow it`);
    return page.items.map((a) => ({ id: a.id, name: a.name, customer_id: a.customer_id, platform: a.platform }));
  }
}

/**
 * The customer an action belongs to, so that callers limited to that customer see it: the one customer
 * of all its agents; null when they span several (or none), and then only unscoped callers see it. A
 * caller limited to customers acts on one of them at a time.
 */
function ownerCustomerOf(caller: Caller, targets: ReadonlyArray<{ customer_id: number | null }>): number | null {
  const customers = new Set(targets.map((t) => t.customer_id));
  if (customers.size === 1) return targets[0]!.customer_id;
  if (scopeOf(caller) === null) return null;
  throw new AppError('VALIDATION_ERROR', `A user limited to customers acts on one customer at a time; these agents belong to ${customers.size} customers`, {
    details: [{ path: 'target', message: 'give customer_id, or agents of one customer' }],
  });
}
