// One run of a group task (issue 33): a bulk action over the agents its target matches now, followed
// until every agent has a result (the bulk runner waits up to 24 h for agents that are not connected).
// The run's result lists one entry per agent; its status is error when any failed, completed_with_warning
// when any never connected, else completed.
import type { Clock } from '../../platform/clock.js';
import { isAppError } from '../../platform/errors.js';
import { internalCaller, type Caller } from '../auth/caller.js';
import type { BulkService } from '../bulk/bulk.service.js';
import { bulkActionOf, type GroupKind } from './task-kinds.js';
import type { TaskRow } from './tasks.repo.js';

const FOLLOW_MS = 2000;
const GROUP_WAIT_HOURS = 24;
/** The run's result names at most this many agents (the bulk action has them all). */
const LISTED_AGENTS = 1000;
/** The bulk action runs as the scheduler (unscoped); the target was kept within the creator's scope when saved. */
const SCHEDULER: Caller = internalCaller('scheduler');

export interface AgentOutcome {
  agentId: string;
  status: 'completed' | 'error' | 'completed_with_warning';
  error: string | null;
}

export interface GroupOutcome {
  status: string;
  result: Record<string, unknown> | null;
  error: string | null;
  agents: AgentOutcome[];
}

const TASK_STATUS = { done: 'completed', failed: 'error', not_connected: 'completed_with_warning', cancelled: 'completed_with_warning' } as const;

/** `started` is told the bulk action as soon as it is made, so the running run can name it. */
export async function runGroup(task: TaskRow, bulk: BulkService, clock: Clock, signal: AbortSignal, started: (bulkId: number) => Promise<void> = async () => undefined): Promise<GroupOutcome> {
  const { action, params } = bulkActionOf(task.kind as GroupKind, task.params);
  let bulkId: number;
  try {
    const made = await bulk.create(SCHEDULER, { action, params, target: task.target ?? {}, wait_hours: GROUP_WAIT_HOURS }, { actor_type: 'system', actor: `task ${task.id} (${task.name})`, task_id: Number(task.id) });
    bulkId = Number(made.id);
    await started(bulkId);
  } catch (err) {
    // No agent matches now, for instance: the run says so.
    return { status: 'error', result: null, error: isAppError(err) ? err.message : 'Could not start the group run', agents: [] };
  }
  for (;;) {
    const { results } = await bulk.get(SCHEDULER, bulkId);
    if (results.every((r) => r.status !== 'waiting' && r.status !== 'running')) {
      const agents = results.map((r) => ({ agentId: r.agent_id, status: TASK_STATUS[r.status as keyof typeof TASK_STATUS] ?? 'error', error: r.error }));
      const failed = agents.filter((a) => a.status === 'error').length;
      const missing = agents.filter((a) => a.status === 'completed_with_warning').length;
      const listed = results.slice(0, LISTED_AGENTS).map((r) => ({ agent_id: r.agent_id, agent_name: r.agent_name, status: r.status, exit_code: r.result?.exit_code ?? null, error: r.error }));
      return {
        status: failed > 0 ? 'error' : missing > 0 ? 'completed_with_warning' : 'completed',
        result: { bulk_action_id: bulkId, agents: listed, ...(results.length > LISTED_AGENTS ? { agents_not_listed: results.length - LISTED_AGENTS } : {}) },
        error: failed > 0 ? `${failed} of ${results.length} agents failed` : null,
        agents,
      };
    }
    try {
      await clock.sleep(FOLLOW_MS, signal);
    } catch {
      return { status: 'error', result: { bulk_action_id: bulkId }, error: `The server stopped while the run followed bulk action ${bulkId}, which goes on`, agents: [] };
    }
  }
}
