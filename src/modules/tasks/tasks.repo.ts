// All SQL of tasks and their runs. Claiming is one statement (FOR UPDATE SKIP LOCKED), so two server
// processes on one PostgreSQL database never run the same due task twice.
import { sql, type Kysely, type Selectable } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { Database, TaskRunsTable, TasksTable } from '../../db/schema.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { inScopeSql, type CustomerScope } from '../auth/caller.js';

type Db = Kysely<Database>;

export type TaskRow = Selectable<TasksTable>;
export type RunRow = Selectable<TaskRunsTable>;

export interface NewTask {
  name: string;
  agent_id: string | null;
  target?: Record<string, unknown> | null;
  scope_customer_id?: number | null;
  customer_number: string | null;
  kind: string;
  params: Record<string, unknown>;
  run_at: Date | null;
  cron: string | null;
  next_run_at: Date;
  webhook_url: string | null;
  health_check_timeout: number;
  /** Null (left out) for group tasks. */
  agent_wait_timeout?: number | null;
  created_at: Date;
}

export interface TaskFilter {
  scope: CustomerScope;
  status?: string | undefined;
  agentId?: string | undefined;
  customerId?: number | undefined;
}

const json = (value: Record<string, unknown> | null) => (value === null ? null : JSON.stringify(value));

export function insertTask(db: Db, task: NewTask): Promise<TaskRow> {
  return db
    .insertInto('tasks')
    .values({ ...task, params: JSON.stringify(task.params), target: json(task.target ?? null), status: 'scheduled' })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The customer a task belongs to: its agent's, or a group task's own. */
const taskCustomer = sql<number | null>`coalesce(a.customer_id, t.scope_customer_id)`;

/** A task with the customer it belongs to, for scope checks. */
export function findTask(db: Db, id: number): Promise<(TaskRow & { customer_id: number | null }) | undefined> {
  return db
    .selectFrom('tasks as t')
    .leftJoin('agents as a', 'a.id', 't.agent_id')
    .selectAll('t')
    .select(taskCustomer.as('customer_id'))
    .where('t.id', '=', id)
    .executeTakeFirst();
}

/** Newest first: ids only grow. */
const NEWEST_TASK_FIRST = keyset([keyColumn('t.id', 'int8')], true);
const NEWEST_RUN_FIRST = keyset([keyColumn('id', 'int8')], true);

export async function listTasks(db: Db, f: TaskFilter, page: PageRequest): Promise<Page<TaskRow>> {
  const query = db
    .selectFrom('tasks as t')
    .leftJoin('agents as a', 'a.id', 't.agent_id')
    .selectAll('t')
    .$if(f.scope !== null, (q) => q.where(inScopeSql(taskCustomer, f.scope!)))
    .$if(f.customerId !== undefined, (q) => q.where(taskCustomer, '=', f.customerId!))
    .$if(f.status !== undefined, (q) => q.where('t.status', '=', f.status!))
    .$if(f.agentId !== undefined, (q) => q.where('t.agent_id', '=', f.agentId!));
  return toPage(await keysetPage(query, NEWEST_TASK_FIRST, page).execute(), page.limit);
}

export async function listRuns(db: Db, taskId: number, page: PageRequest): Promise<Page<RunRow>> {
  const query = db.selectFrom('task_runs').selectAll().where('task_id', '=', taskId);
  return toPage(await keysetPage(query, NEWEST_RUN_FIRST, page).execute(), page.limit);
}

/** Makes a scheduled (or finished) task due now; undefined when it is running or cancelled. */
export function makeDueNow(db: Db, id: number, now: Date): Promise<TaskRow | undefined> {
  return db
    .updateTable('tasks')
    .set({ status: 'scheduled', next_run_at: now })
    .where('id', '=', id)
    .where('status', 'not in', ['running', 'cancelled'])
    .returningAll()
    .executeTakeFirst();
}

/** The fields an edit may change (PATCH /tasks/{id}); those left out stay. */
export type TaskChanges = Partial<Pick<NewTask, 'name' | 'params' | 'run_at' | 'cron' | 'webhook_url' | 'health_check_timeout' | 'agent_wait_timeout'> & { next_run_at: Date; status: 'scheduled' }>;

/** Edits a task that is neither running nor cancelled (checked in the same statement as the scheduler's
 * claim sets `running`, so an edit never lands under a run); undefined otherwise. */
export function updateTask(db: Db, id: number, changes: TaskChanges): Promise<TaskRow | undefined> {
  const { params, ...rest } = changes;
  return db
    .updateTable('tasks')
    .set({ ...rest, ...(params ? { params: JSON.stringify(params) } : {}) })
    .where('id', '=', id)
    .where('status', 'not in', ['running', 'cancelled'])
    .returningAll()
    .executeTakeFirst();
}

/**
 * Cancels a task that is not running, or whose run still waits for its agent (nothing was sent: that
 * run ends `cancelled`, and the runner finds it so when its wait ends); undefined when it runs.
 */
export function cancelTask(db: Db, id: number, now: Date): Promise<TaskRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const waiting = await trx
      .updateTable('task_runs')
      .set({ status: 'cancelled', waiting_until: null, finished_at: now, error: 'Cancelled while the run waited for the agent' })
      .where('task_id', '=', id)
      .where('status', '=', 'running')
      .where('waiting_until', 'is not', null)
      .returning('id')
      .executeTakeFirst();
    return trx
      .updateTable('tasks')
      .set({ status: 'cancelled', next_run_at: null, ...(waiting ? { claimed_by: null, lease_until: null } : {}) })
      .where('id', '=', id)
      .$if(!waiting, (q) => q.where('status', '!=', 'running'))
      .returningAll()
      .executeTakeFirst();
  });
}

/**
 * Claims up to `limit` due tasks for `claimant` and opens a run for each, in one statement: the tasks
 * become `running` with a lease, and rows another process has locked are skipped.
 */
export async function claimDue(db: Db, now: Date, claimant: string, leaseUntil: Date, limit: number): Promise<Array<{ task: TaskRow; runId: number }>> {
  const { rows } = await sql<TaskRow & { run_id: number }>`
    with due as (
      select id from tasks
      where status = 'scheduled' and next_run_at <= ${now}
      order by next_run_at, id
      limit ${limit}
      for update skip locked
    ), claimed as (
      update tasks t set status = 'running', claimed_by = ${claimant}, lease_until = ${leaseUntil}, last_run_at = ${now}
      from due where t.id = due.id
      returning t.*
    ), runs as (
      insert into task_runs (task_id, status, started_at)
      select id, 'running', ${now} from claimed
      returning id, task_id
    )
    select claimed.*, runs.id as run_id from claimed join runs on runs.task_id = claimed.id`.execute(db);
  return rows.map(({ run_id, ...task }) => ({ task: task as TaskRow, runId: Number(run_id) }));
}

/** Renews the leases of the tasks this process runs. */
export async function renewLeases(db: Db, claimant: string, ids: number[], leaseUntil: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('tasks').set({ lease_until: leaseUntil }).where('claimed_by', '=', claimant).where('id', 'in', ids).execute();
}

/**
 * Closes a run and moves its task on: a recurring task is scheduled for `nextRunAt`, a planned one
 * takes the run's status. A task cancelled meanwhile stays cancelled.
 */
/** A run's result while it is still running (a group run's bulk action, so its page can link to it). */
export async function noteRunResult(db: Db, runId: number, result: Record<string, unknown>): Promise<void> {
  await db.updateTable('task_runs').set({ result: json(result) }).where('id', '=', runId).where('finished_at', 'is', null).execute();
}

export async function finishRun(
  db: Db,
  run: { taskId: number; runId: number; status: string; result: Record<string, unknown> | null; error: string | null; finishedAt: Date; nextRunAt: Date | null },
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('task_runs')
      .set({ status: run.status, result: json(run.result), error: run.error, finished_at: run.finishedAt })
      .where('id', '=', run.runId)
      .execute();
    await trx
      .updateTable('tasks')
      .set({
        status: sql<string>`case when status = 'cancelled' then 'cancelled' else ${run.nextRunAt !== null ? 'scheduled' : run.status}::text end`,
        next_run_at: sql<Date | null>`case when status = 'cancelled' then null else ${run.nextRunAt}::timestamptz end`,
        result: json(run.result ?? (run.error ? { error: run.error } : null)),
        claimed_by: null,
        lease_until: null,
      })
      .where('id', '=', run.taskId)
      .execute();
  });
}

export async function saveWebhookOutcome(db: Db, runId: number, outcome: Record<string, unknown>): Promise<void> {
  await db.updateTable('task_runs').set({ webhook: json(outcome) }).where('id', '=', runId).execute();
}

/** An open run as recovery sees it: when it started, and until when it waits for its agent (null: its command left). */
export interface OpenRun {
  run_id: number | null;
  run_started_at: Date | null;
  waiting_until: Date | null;
}

/** Every running task with its open run: the scheduler decides which were abandoned. */
export async function runningTasks(db: Db): Promise<Array<TaskRow & OpenRun>> {
  const rows = await db
    .selectFrom('tasks as t')
    .leftJoin('task_runs as r', (j) => j.onRef('r.task_id', '=', 't.id').on('r.status', '=', 'running'))
    .selectAll('t')
    .select(['r.id as run_id', 'r.started_at as run_started_at', 'r.waiting_until'])
    .where('t.status', '=', 'running')
    .execute();
  return rows.map((r) => ({ ...r, run_id: r.run_id === null ? null : Number(r.run_id) }));
}

/** The run waits for its agent until `until`. */
export async function startWaiting(db: Db, runId: number, until: Date): Promise<void> {
  await db.updateTable('task_runs').set({ waiting_until: until }).where('id', '=', runId).where('status', '=', 'running').execute();
}

/** Ends a run's wait for its agent; false when the run was cancelled meanwhile (it must not go on). */
export async function stopWaiting(db: Db, runId: number): Promise<boolean> {
  const row = await db
    .updateTable('task_runs')
    .set({ waiting_until: null })
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Lets go of a task whose run waits (the server stops): the next scheduler takes the run up at once. */
export async function releaseClaim(db: Db, taskId: number, claimant: string): Promise<void> {
  await db.updateTable('tasks').set({ claimed_by: null, lease_until: null }).where('id', '=', taskId).where('claimed_by', '=', claimant).where('status', '=', 'running').execute();
}

/** Takes over a running task from `from` (gone, or null); undefined when someone else did first. */
export function takeOver(db: Db, taskId: number, from: string | null, claimant: string, leaseUntil: Date): Promise<TaskRow | undefined> {
  return db
    .updateTable('tasks')
    .set({ claimed_by: claimant, lease_until: leaseUntil })
    .where('id', '=', taskId)
    .where('status', '=', 'running')
    .where(sql<boolean>`claimed_by is not distinct from ${from}`)
    .returningAll()
    .executeTakeFirst();
}

/** The earliest next_run_at of a scheduled task, for the scheduler's sleep. */
export async function nextDueAt(db: Db): Promise<Date | null> {
  const row = await db.selectFrom('tasks').select((eb) => eb.fn.min('next_run_at').as('next')).where('status', '=', 'scheduled').executeTakeFirst();
  return (row?.next as Date | null | undefined) ?? null;
}
