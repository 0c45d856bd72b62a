// Processes and services of an agent's device (issue 59): each operation checks who may (the shared
// device guard), then asks the agent over its WebSocket through the commander (so it works from any
// instance of a cluster), and checks the answer before any of it is returned.
import type { z } from 'zod';
import { AppError } from '../../platform/errors.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import { procListResult, svcActionResult, svcListResult, type DeviceProcess, type DeviceService } from '../agent-hub/device-protocol.js';
import type { Agent } from '../agents/agents.service.js';
import type { Caller } from '../auth/caller.js';
import type { DeviceAccess } from '../device-sessions/device-access.js';

/** Listing reads every process or asks every init script for its status: it may take a while. */
export const LIST_TIMEOUT_MS = 30_000;
/** A service's stop may wait for it to end (nginx: up to 15 s of its stop schedule). */
export const ACTION_TIMEOUT_MS = 60_000;

type Signal = 'TERM' | 'KILL' | 'INT' | 'HUP';
type Action = 'start' | 'stop' | 'restart' | 'enable' | 'disable';

export class DeviceManageService {
  constructor(
    private readonly access: DeviceAccess,
    private readonly commander: AgentCommander,
  ) {}

  async processes(caller: Caller, agentId: string): Promise<{ processes: DeviceProcess[] }> {
    const agent = await this.access.check(caller, agentId, 'processes', 'view');
    return checked(procListResult, await agentAnswer(this.commander.request(agent.id, 'proc_list', {}, LIST_TIMEOUT_MS)), 'proc_list');
  }

  /** `onAgent` gets the agent once the caller may act (the route names it in the audit entry). */
  async kill(caller: Caller, agentId: string, pid: number, signal: Signal, onAgent: (agent: Agent) => void): Promise<Record<string, never>> {
    const agent = await this.access.check(caller, agentId, 'processes', 'change');
    onAgent(agent);
    await agentAnswer(this.commander.request(agent.id, 'proc_kill', { pid, signal }, ACTION_TIMEOUT_MS));
    return {};
  }

  async services(caller: Caller, agentId: string): Promise<{ manager: 'systemd' | 'sysv' | 'rc.d' | 'scm'; services: DeviceService[] }> {
    const agent = await this.access.check(caller, agentId, 'services', 'view');
    return checked(svcListResult, await agentAnswer(this.commander.request(agent.id, 'svc_list', {}, LIST_TIMEOUT_MS)), 'svc_list');
  }

  async serviceAction(caller: Caller, agentId: string, name: string, action: Action, onAgent: (agent: Agent) => void): Promise<{ service: DeviceService; output: string }> {
    const agent = await this.access.check(caller, agentId, 'services', 'change');
    onAgent(agent);
    return checked(svcActionResult, await agentAnswer(this.commander.request(agent.id, 'svc_action', { name, action }, ACTION_TIMEOUT_MS)), 'svc_action');
  }
}

/** The agent's "no such process/service" is the caller's 404; any other agent error stays 502 with its text. */
async function agentAnswer(request: Promise<unknown>): Promise<unknown> {
  try {
    return await request;
  } catch (err) {
    if (err instanceof AppError && err.code === 'AGENT_ERROR' && /\bno such (process|service)\b/i.test(err.message)) {
      throw new AppError('NOT_FOUND', err.message.replace(/^The agent reported an error: /, ''));
    }
    throw err;
  }
}

function checked<T extends z.ZodType>(schema: T, answer: unknown, command: string): z.output<T> {
  const parsed = schema.safeParse(answer);
  if (!parsed.success) throw new AppError('AGENT_ERROR', `The agent's answer to ${command} is malformed`);
  return parsed.data;
}
