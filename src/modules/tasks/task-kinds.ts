// What each task kind does (contract §10): the agent command it sends, with the same parameters and
// answer waits as the REST command of that name (contract §6), or a configuration backup. Update kinds
// are followed by the health check.
import { z } from 'zod';
import { AppError } from '../../platform/errors.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import { execBody, REST_COMMANDS } from '../agent-hub/commands.schemas.js';
import type { BackupService } from '../backups/backups.service.js';
import { internalCaller, type Caller } from '../auth/caller.js';
import { sendExec, type CommandHistory, type ExecOrigin } from '../history/command-history.js';
import type { AgentService } from '../agents/agents.service.js';
import { scriptRunParams } from '../scripts/scripts.schemas.js';
import type { ScriptService } from '../scripts/scripts.service.js';
import { idRefSchema } from '../../http/common-schemas.js';

export const TASK_KINDS = ['update', 'security_update', 'dist_upgrade', 'reboot', 'exec', 'backup', 'script'] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

/** Kinds a group task may have, and the bulk action each runs as (bulk-kinds.ts). */
export const GROUP_KINDS = ['update', 'security_update', 'reboot', 'exec', 'script'] as const;
export type GroupKind = (typeof GROUP_KINDS)[number];

export function bulkActionOf(kind: GroupKind, params: Record<string, unknown>): { action: 'update' | 'reboot' | 'exec' | 'script'; params: Record<string, unknown> } {
  if (kind === 'update' || kind === 'security_update') return { action: 'update', params: { reboot: params.reboot === true, security_only: kind === 'security_update' } };
  return { action: kind, params };
}

/** Kinds after which the run waits for the agent to come back (spec: the post-update health check). */
export const UPDATE_KINDS: ReadonlySet<TaskKind> = new Set(['update', 'security_update', 'dist_upgrade']);

const reboot = z.boolean().default(false).describe('Reboot after updating');

/** `params` per kind, checked when the task is saved. */
export const TASK_PARAMS: Record<TaskKind, z.ZodType<Record<string, unknown>>> = {
  update: z.object({ reboot }).default({ reboot: false }),
  security_update: z.object({ reboot }).default({ reboot: false }),
  dist_upgrade: z.object({ version: z.string().min(1).max(100).describe('Target release'), reboot }),
  reboot: z.object({ delay: z.number().int().min(0).max(86_400).default(0) }).default({ delay: 0 }),
  exec: execBody,
  backup: z.object({}).default({}),
  // A saved script (issue 33): checked against the agent's platform when it runs.
  script: z.object({ script_id: idRefSchema, ...scriptRunParams }),
};

/** Runs as an operator would have: unscoped, so a task reaches its agent whoever the agent belongs to now. */
const SCHEDULER: Caller = internalCaller('scheduler');

export interface KindOutcome {
  result: Record<string, unknown>;
  /** Set when the agent answered but the job failed (an exec with a non-zero exit code). */
  error?: string;
}

const waitOf = (command: string, body: Record<string, unknown>) => {
  const entry = REST_COMMANDS.find((c) => c.command === command);
  if (!entry) throw new Error(`no REST command ${command}`);
  return (entry.waitMs as (b: Record<string, unknown>) => number)(body);
};

export interface KindDeps {
  commander: AgentCommander;
  backups: BackupService;
  agents: AgentService;
  history: CommandHistory;
  scripts: ScriptService;
  /** Who the command history names for execs (the task). */
  origin: ExecOrigin;
}

export async function runKind(kind: TaskKind, params: Record<string, unknown>, agentId: string, deps: KindDeps): Promise<KindOutcome> {
  const send = async (command: 'update' | 'major_update' | 'reboot' | 'exec', body: Record<string, unknown>) => {
    const data = await deps.commander.request(agentId, command, body as never, waitOf(command, body));
    return typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : { answer: data };
  };
  switch (kind) {
    case 'update':
    case 'security_update':
      return { result: await send('update', { reboot: params.reboot === true, security_only: kind === 'security_update' }) };
    case 'dist_upgrade':
      return { result: await send('major_update', { version: params.version, reboot: params.reboot === true }) };
    case 'reboot':
      return { result: await send('reboot', { delay: params.delay ?? 0 }) };
    case 'exec': {
      const command = params.command as string;
      const timeout = (params.timeout as number | undefined) ?? 60;
      const { history_id: _id, ...result } = await deps.history.run(deps.origin, agentId, command, timeout, () => sendExec(deps.commander, agentId, command, timeout));
      return result.exit_code === 0 ? { result } : { result, error: `the command exited with code ${String(result.exit_code)}` };
    }
    case 'script': {
      const agent = await deps.agents.get(SCHEDULER, agentId);
      const prepared = await deps.scripts.prepare(params.script_id as number, agent.platform, params);
      const { history_id: _id, ...result } = await deps.scripts.execute({ ...deps.origin, script: prepared.script }, agentId, prepared);
      return result.exit_code === 0 ? { result } : { result, error: `the script exited with code ${String(result.exit_code)}` };
    }
    case 'backup': {
      const { backup, created } = await deps.backups.create(SCHEDULER, agentId);
      return { result: { backup_id: backup.id, hash: backup.hash, size: backup.size, created } };
    }
    default:
      throw new AppError('VALIDATION_ERROR', `unknown task kind ${String(kind)}`);
  }
}
