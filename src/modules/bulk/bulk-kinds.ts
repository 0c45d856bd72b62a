// What each bulk action does on one agent: the same commands, parameters and answer waits as the REST
// command of that name (contract §6), exec and scripts through the command history. request_update
// needs no connection (it sets the agent's update flag) and is done when the action is made.
import { z } from 'zod';
import { idRefSchema } from '../../http/common-schemas.js';
import { isAppError } from '../../platform/errors.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import { execBody, REST_COMMANDS } from '../agent-hub/commands.schemas.js';
import { sendExec, type CommandHistory, type ExecAnswer, type ExecOrigin } from '../history/command-history.js';
import { scriptRunParams } from '../scripts/scripts.schemas.js';
import type { ScriptService } from '../scripts/scripts.service.js';
import type { Platform } from '../../db/schema.js';

export const BULK_ACTIONS = ['exec', 'script', 'update_check', 'update', 'reboot', 'request_update'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

const restBody = (command: string) => REST_COMMANDS.find((c) => c.command === command)!.body as unknown as z.ZodType<Record<string, unknown>>;

/** `params` per action, checked when the action is made. */
export const BULK_PARAMS: Record<BulkAction, z.ZodType<Record<string, unknown>>> = {
  exec: execBody,
  script: z.object({ script_id: idRefSchema, ...scriptRunParams }),
  update_check: z.object({}).default({}),
  update: restBody('update'),
  reboot: restBody('reboot'),
  request_update: z.object({}).default({}),
};

/** The stored result keeps this much of each output stream; the history entry has the rest. */
const RESULT_OUTPUT_CHARS = 4096;

export interface OneOutcome {
  status: 'done' | 'failed';
  result: Record<string, unknown> | null;
  error: string | null;
  history_id: number | null;
}

export interface KindDeps {
  commander: AgentCommander;
  history: CommandHistory;
  scripts: ScriptService;
}

const waitOf = (command: string, body: Record<string, unknown>) => (REST_COMMANDS.find((c) => c.command === command)!.waitMs as (b: Record<string, unknown>) => number)(body);

function execOutcome(answer: ExecAnswer & { history_id: number | null }): OneOutcome {
  const result = { exit_code: answer.exit_code, stdout: answer.stdout.slice(0, RESULT_OUTPUT_CHARS), stderr: answer.stderr.slice(0, RESULT_OUTPUT_CHARS) };
  const failed = answer.exit_code !== 0;
  return { status: failed ? 'failed' : 'done', result, error: failed ? `exited with code ${String(answer.exit_code)}` : null, history_id: answer.history_id };
}

/**
 * Runs the action on one connected agent. An agent error is a failed result, not a throw, except
 * AGENT_NOT_CONNECTED (it went away before the command left), which the runner puts back to waiting.
 */
export async function runOn(action: BulkAction, params: Record<string, unknown>, agent: { id: string; platform: Platform | null }, origin: ExecOrigin, deps: KindDeps): Promise<OneOutcome> {
  try {
    switch (action) {
      case 'exec': {
        const { command, timeout } = params as { command: string; timeout: number };
        return execOutcome(await deps.history.run(origin, agent.id, command, timeout, () => sendExec(deps.commander, agent.id, command, timeout)));
      }
      case 'script': {
        const prepared = await deps.scripts.prepare(params.script_id as number, agent.platform, params);
        return execOutcome(await deps.scripts.execute({ ...origin, script: prepared.script }, agent.id, prepared));
      }
      case 'update_check':
      case 'update':
      case 'reboot': {
        const data = await deps.commander.request(agent.id, action, params as never, waitOf(action, params));
        const result = typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>) : { answer: data ?? null };
        return { status: 'done', result, error: null, history_id: null };
      }
      case 'request_update':
        return { status: 'done', result: null, error: null, history_id: null };
    }
  } catch (err) {
    if (isAppError(err) && err.code === 'AGENT_NOT_CONNECTED') throw err;
    return { status: 'failed', result: null, error: isAppError(err) ? `${err.code}: ${err.message}` : 'Internal error while running the action', history_id: null };
  }
}
