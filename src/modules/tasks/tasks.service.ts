// Tasks (contract §10): created for one agent the caller can see, with the agent's customer number
// copied in, or (issue 33) for a group: a customer, a platform and/or a tag, resolved at every run; planned once (`run_at`, default now) or recurring (`cron`); run now; cancelled unless
// a run is under way (one still waiting for its agent is cancelled with it). The scheduler is woken whenever a task becomes due earlier than it planned to look.
import type { Kysely } from 'kysely';
import type { Database, Platform } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import type { AgentService } from '../agents/agents.service.js';
import { assertBacksUpConfiguration } from '../backups/backups.service.js';
import { assertInScope, defaultCustomerOf, scopeOf, type Caller } from '../auth/caller.js';
import { findCustomer } from '../customers/customers.repo.js';
import { cronProblem, nextCronRun } from './cron.js';
import { GROUP_KINDS, TASK_PARAMS, type TaskKind } from './task-kinds.js';
import * as repo from './tasks.repo.js';

export type Task = repo.TaskRow;
export type TaskRun = repo.RunRow;

export interface NewTaskInput {
  agent_id?: string | undefined;
  target?: { customer_id?: number | undefined; platform?: Platform | undefined; tag?: string | undefined } | undefined;
  kind: TaskKind;
  name?: string | undefined;
  params?: Record<string, unknown> | undefined;
  run_at?: Date | undefined;
  cron?: string | undefined;
  webhook_url?: string | undefined;
  health_check_timeout: number;
  agent_wait_timeout?: number | undefined;
}

/** An edit: fields left out stay; `webhook_url: null` removes the webhook. */
export interface TaskEdit {
  name?: string | undefined;
  params?: Record<string, unknown> | undefined;
  run_at?: Date | undefined;
  cron?: string | undefined;
  webhook_url?: string | null | undefined;
  health_check_timeout?: number | undefined;
  agent_wait_timeout?: number | undefined;
}

/** How long a single-agent run waits for an agent that is away when it is due, unless the task says. */
export const DEFAULT_AGENT_WAIT_S = 600;

export interface TaskServiceDeps {
  agents: AgentService;
  clock: Clock;
  /** Checks a webhook URL on save (400 for loopback, link-local, metadata targets). */
  checkWebhookUrl(url: string): Promise<unknown>;
  /** Wakes the scheduler. */
  wake(): void;
}

const invalid = (path: string, message: string) => new AppError('VALIDATION_ERROR', `${path}: ${message}`, { details: [{ path, message }] });

export class TaskService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly deps: TaskServiceDeps,
  ) {}

  async create(caller: Caller, input: NewTaskInput): Promise<Task> {
    if ((input.agent_id === undefined) === (input.target === undefined)) throw invalid('agent_id', 'give agent_id (one agent) or target (a group), one of them');
    const subject = input.agent_id !== undefined ? await this.agentSubject(caller, input.agent_id, input.kind) : await this.groupSubject(caller, input.kind, input.target!);
    if (subject.agentId === null) noAgentWait(input);
    const params = paramsOf(input.kind, input.params);
    const now = this.deps.clock.now();
    const nextRunAt = nextRunOf(input, now) ?? now;
    if (input.webhook_url !== undefined) await this.deps.checkWebhookUrl(input.webhook_url);
    const task = await repo.insertTask(this.db, {
      name: input.name?.trim() || `${input.kind} ${subject.label}`,
      agent_id: subject.agentId,
      target: subject.target,
      scope_customer_id: subject.scopeCustomerId,
      customer_number: subject.customerNumber,
      kind: input.kind,
      params,
      run_at: input.cron !== undefined ? null : nextRunAt,
      cron: input.cron ?? null,
      next_run_at: nextRunAt,
      webhook_url: input.webhook_url ?? null,
      health_check_timeout: input.health_check_timeout,
      agent_wait_timeout: subject.agentId === null ? null : (input.agent_wait_timeout ?? DEFAULT_AGENT_WAIT_S),
      created_at: now,
    });
    this.deps.wake();
    return task;
  }

  /** A single-agent task's agent: 404 outside the caller's scope. */
  private async agentSubject(caller: Caller, agentId: string, kind: TaskKind) {
    const agent = await this.deps.agents.get(caller, agentId);
    if (kind === 'backup') assertBacksUpConfiguration(agent);
    const customer = agent.customer_id === null ? undefined : await findCustomer(this.db, agent.customer_id);
    return { agentId: agent.id, target: null, scopeCustomerId: null, customerNumber: customer?.number ?? null, label: agent.name ?? agent.hostname ?? agent.id };
  }

  /** A group task's target, kept within a scoped caller's customer (404 for another). */
  private async groupSubject(caller: Caller, kind: TaskKind, target: NonNullable<NewTaskInput['target']>) {
    if (!(GROUP_KINDS as readonly string[]).includes(kind)) throw invalid('kind', `a group task runs ${GROUP_KINDS.join(', ')}`);
    const customerId = target.customer_id ?? defaultCustomerOf(caller, 'target.customer_id') ?? undefined;
    if (customerId !== undefined) assertInScope(caller, customerId, 'Customer');
    const customer = customerId === undefined ? undefined : await findCustomer(this.db, customerId);
    if (customerId !== undefined && !customer) throw new AppError('NOT_FOUND', 'Customer not found');
    const resolved = { ...target, ...(customerId !== undefined ? { customer_id: customerId } : {}) };
    const label = [customer?.name, target.platform, target.tag && `#${target.tag}`].filter(Boolean).join(' ');
    return { agentId: null, target: resolved, scopeCustomerId: customerId ?? null, customerNumber: customer?.number ?? null, label: `group ${label}` };
  }

  list(caller: Caller, filter: Omit<repo.TaskFilter, 'scope'>, page: PageRequest): Promise<Page<Task>> {
    return repo.listTasks(this.db, { ...filter, scope: scopeOf(caller) }, page);
  }

  async get(caller: Caller, id: number): Promise<Task> {
    const task = await repo.findTask(this.db, id);
    if (!task) throw new AppError('NOT_FOUND', 'Task not found');
    assertInScope(caller, task.customer_id, 'Task');
    const { customer_id: _customer, ...row } = task;
    return row;
  }

  async runs(caller: Caller, id: number, page: PageRequest): Promise<Page<TaskRun>> {
    await this.get(caller, id);
    return repo.listRuns(this.db, id, page);
  }

  /** Makes the task due now; 409 while it runs or once cancelled. */
  async runNow(caller: Caller, id: number): Promise<Task> {
    const task = await this.get(caller, id);
    const due = await repo.makeDueNow(this.db, id, this.deps.clock.now());
    if (!due) throw new AppError('CONFLICT', task.status === 'cancelled' ? 'The task is cancelled' : 'The task is running');
    this.deps.wake();
    return due;
  }

  /**
   * Edits name, params (checked against the task's kind, which stays), schedule or webhook. A new
   * schedule makes the task scheduled again from now (a finished one-off task given a new time runs
   * again); 409 while it runs or once cancelled, as for running it now.
   */
  async update(caller: Caller, id: number, edit: TaskEdit): Promise<Task> {
    const task = await this.get(caller, id);
    const changes: repo.TaskChanges = {};
    if (edit.name !== undefined) changes.name = edit.name.trim() || task.name;
    if (edit.params !== undefined) changes.params = paramsOf(task.kind as TaskKind, edit.params);
    const next = nextRunOf(edit, this.deps.clock.now());
    if (next) Object.assign(changes, { next_run_at: next, status: 'scheduled', cron: edit.cron ?? null, run_at: edit.cron === undefined ? next : null });
    if (edit.webhook_url !== undefined) {
      if (edit.webhook_url !== null) await this.deps.checkWebhookUrl(edit.webhook_url);
      changes.webhook_url = edit.webhook_url;
    }
    if (edit.health_check_timeout !== undefined) changes.health_check_timeout = edit.health_check_timeout;
    if (edit.agent_wait_timeout !== undefined) {
      if (task.agent_id === null) noAgentWait(edit);
      changes.agent_wait_timeout = edit.agent_wait_timeout;
    }
    const updated = await repo.updateTask(this.db, id, changes);
    if (!updated) throw new AppError('CONFLICT', task.status === 'cancelled' ? 'The task is cancelled' : 'The task is running; edit it after this run');
    if (next) this.deps.wake();
    return updated;
  }

  /** Cancels future runs, and a run still waiting for its agent; 409 while a run is under way. */
  async cancel(caller: Caller, id: number): Promise<Task> {
    await this.get(caller, id);
    const cancelled = await repo.cancelTask(this.db, id, this.deps.clock.now());
    if (!cancelled) throw new AppError('CONFLICT', 'The task is running; cancel it after this run');
    return cancelled;
  }
}

/** A group run waits for each agent as its bulk action does (24 h): the field is a single-agent task's. */
function noAgentWait(input: { agent_wait_timeout?: number | undefined }): void {
  if (input.agent_wait_timeout !== undefined) throw invalid('agent_wait_timeout', 'applies to single-agent tasks; a group run waits up to 24 h for each agent');
}

/** A kind's params, checked (400 naming the first bad field). */
function paramsOf(kind: TaskKind, params: Record<string, unknown> | undefined): Record<string, unknown> {
  const parsed = TASK_PARAMS[kind].safeParse(params ?? undefined);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(['params', ...(issue?.path ?? [])].join('.'), issue?.message ?? 'is invalid');
  }
  return parsed.data;
}

/** When a schedule (`run_at` once or `cron` recurring, not both) next runs; undefined when none is given. */
function nextRunOf(schedule: { run_at?: Date | undefined; cron?: string | undefined }, now: Date): Date | undefined {
  if (schedule.cron !== undefined && schedule.run_at !== undefined) throw invalid('cron', 'give either run_at (once) or cron (recurring), not both');
  if (schedule.cron === undefined) return schedule.run_at;
  const problem = cronProblem(schedule.cron);
  if (problem) throw invalid('cron', problem);
  return nextCronRun(schedule.cron, now)!;
}
