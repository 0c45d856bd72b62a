// What a command handler of the reference agent gets and returns. Handlers are a strategy table keyed by
// the protocol's command names (agent-protocol.ts); each receives already validated params.
import type { AgentCommand, CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import type { deviceCommandParams } from '../../modules/agent-hub/device-protocol.js';
import type { DeviceStateStore } from '../device-state.js';
import type { AgentStreams } from '../device-streams.js';
import type { TunnelSessions } from '../tunnel-sessions.js';

export { CommandError } from './command-error.js';

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
  /** Device sessions' streams (shell, file transfers); without it those commands are refused as unsupported. */
  streams?: AgentStreams;
}

/** Commands of capabilities an agent may lack: the device's (issue 59) and checks (issue 61). */
type DeviceCommand = keyof typeof deviceCommandParams | 'checks_set';

/** Resolves with the answer's `data`; a rejection becomes `success:false` with the error's message. */
export type CommandHandler<C extends AgentCommand> = (params: CommandParams<C>, ctx: CommandContext) => Promise<unknown>;

/** The spec's commands every agent answers, and the device commands (issue 59) of the capabilities it announces. */
export type CommandTable = { [C in Exclude<AgentCommand, DeviceCommand>]: CommandHandler<C> } & { [C in DeviceCommand]?: CommandHandler<C> };
