// What features need from the agent hub: whether an agent's socket is open, and a command round trip.
// Features depend on this interface only, so the hub can later forward commands to the server
// instance that holds the socket (scale-out) without their code changing.
import type { AgentCommand, CommandParams } from './agent-protocol.js';

export interface AgentCommander {
  isConnected(agentId: string): boolean;
  /**
   * Sends `command` to the agent and resolves with the `data` of its success answer. Rejects with
   * AppError AGENT_NOT_CONNECTED (409) when no socket is open, AGENT_TIMEOUT (504) after `timeoutMs`,
   * AGENT_ERROR (502, the agent's text) on `success:false`, AGENT_DISCONNECTED (502) when the socket
   * closes first, and SERVICE_UNAVAILABLE (503) when the server stops while waiting.
   */
  request<C extends AgentCommand>(agentId: string, command: C, params: CommandParams<C>, timeoutMs: number): Promise<unknown>;
}

/** Waiting for an agent to come back (after an update or reboot), wherever it connects. */
export interface AgentReconnectWatch {
  /** True when the agent opened a new connection within `ms`; `signal` ends the wait early (false). */
  nextConnection(agentId: string, ms: number, signal?: AbortSignal): Promise<boolean>;
}
