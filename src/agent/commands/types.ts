// What a command handler of the reference agent gets and returns. Handlers are a strategy table keyed by
// the protocol's command names (agent-protocol.ts); each receives already validated params.
import type { AgentCommand, CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import type { DeviceStateStore } from '../device-state.js';
import type { TunnelSessions } from '../tunnel-sessions.js';

export interface CommandContext {
  /** The simulated device of this agent instance. */
  device: DeviceStateStore;
  /** The file `backup` answers with. */
  backupFile: string;
  /** Aborted when the agent stops: long-running handlers (exec) end their work. */
  signal: AbortSignal;
  /** Simulates a reboot `delaySeconds` after the answer was sent. */
  scheduleReboot(delaySeconds: number): void;
  now(): Date;
  /** The agent's tunnel sessions; without it tunnel commands are refused as unsupported. */
  tunnels?: TunnelSessions;
}

/** Resolves with the answer's `data`; a rejection becomes `success:false` with the error's message. */
export type CommandHandler<C extends AgentCommand> = (params: CommandParams<C>, ctx: CommandContext) => Promise<unknown>;

export type CommandTable = { [C in AgentCommand]: CommandHandler<C> };

/** An error whose message is meant for the operator (sent back as the answer's `error`). */
export class CommandError extends Error {}
