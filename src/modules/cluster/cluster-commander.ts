// Commands across instances (issue 32): features ask this commander, as they would ask the hub on one
// instance. An agent whose socket is here takes the direct path; any other is asked over NATS on its
// own subject, which only the instance holding its socket serves (in a queue group, so a command is
// never delivered to two instances while a replaced socket is still closing). Failures keep the
// single-instance meaning: nobody holds the agent → 409 AGENT_NOT_CONNECTED; the holder never
// answered (it died) → 504; the agent's own failure → the holder's error, as it reported it; the bus
// itself down → 503 CLUSTER_UNAVAILABLE.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Subscription } from '@nats-io/transport-node';
import { AppError, ERROR_STATUS, type ErrorCode } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import type { AgentCommander, AgentReconnectWatch } from '../agent-hub/agent-commander.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import type { AgentCommand, CommandParams } from '../agent-hub/agent-protocol.js';
import type { AgentConnections } from '../agents/agents.service.js';
import { INLINE_REPLY_LIMIT, type BigReplies } from './big-replies.js';
import { BusError, JsonText, type ClusterBus } from './cluster-bus.js';
import type { ClusterPresence } from './presence.js';

const commandSubject = (agentId: string) => `rmm.agent.${agentId}.command`;
const controlSubject = (agentId: string) => `rmm.agent.${agentId}.control`;
/** The holder answers a command's own timeout itself; the bus waits this much longer for that answer. */
const HOLDER_MARGIN_MS = 2_000;
/** Right after an agent connects elsewhere, its subject may not have reached every NATS server yet. */
const NO_RESPONDERS_RETRY_MS = 250;

type CommandRequest = { command: AgentCommand; params: unknown; timeoutMs: number };
type CommandReply = { ok: true; data: unknown } | { ok: true; stored: string } | { ok: false; code: string; message: string };
type Control = { op: 'replaced' | 'deleted'; by: string };

export class ClusterCommander implements AgentCommander, AgentConnections, AgentReconnectWatch {
  readonly #held = new Map<string, Subscription[]>();

  constructor(
    private readonly hub: AgentHub,
    private readonly bus: ClusterBus,
    private readonly presence: ClusterPresence,
    private readonly replies: BigReplies,
    private readonly instanceId: string,
    private readonly logger: Logger,
  ) {}

  isConnected(agentId: string): boolean {
    return this.hub.isConnected(agentId) || this.presence.holderOf(agentId) !== undefined;
  }

  /** The agent was deleted: its socket closes with 4004 wherever it is. */
  disconnect(agentId: string): void {
    this.hub.disconnect(agentId);
    this.bus.publish(controlSubject(agentId), { op: 'deleted', by: this.instanceId } satisfies Control);
  }

  async nextConnection(agentId: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    const both = new AbortController();
    const stop = () => both.abort();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      return await Promise.race([this.hub.nextConnection(agentId, ms, both.signal), this.presence.waitForRemote(agentId, ms, both.signal)]);
    } finally {
      both.abort();
      signal?.removeEventListener('abort', stop);
    }
  }

  async request<C extends AgentCommand>(agentId: string, command: C, params: CommandParams<C>, timeoutMs: number): Promise<unknown> {
    if (this.hub.isConnected(agentId)) return this.hub.request(agentId, command, params, timeoutMs);
    if (!this.bus.available) throw unavailable();
    const ask = () => this.bus.request(commandSubject(agentId), { command, params, timeoutMs } satisfies CommandRequest, timeoutMs + HOLDER_MARGIN_MS);
    let reply: unknown;
    try {
      reply = await ask().catch(async (err: unknown) => {
        if (!(err instanceof BusError) || err.failure !== 'no-responders' || this.presence.holderOf(agentId) === undefined) throw err;
        await sleep(NO_RESPONDERS_RETRY_MS);
        return ask();
      });
    } catch (err) {
      if (!(err instanceof BusError)) throw err;
      if (err.failure === 'no-responders') throw new AppError('AGENT_NOT_CONNECTED', 'The agent is not connected');
      if (err.failure === 'timeout') throw new AppError('AGENT_TIMEOUT', `The server instance holding the agent's connection did not answer ${command} within ${Math.round(timeoutMs / 1000)} s`);
      throw unavailable();
    }
    return this.#unwrap(reply as CommandReply);
  }

  /** The agents whose sockets this instance holds. */
  heldAgents(): string[] {
    return [...this.#held.keys()];
  }

  /** The hub took over (`true`) or let go of an agent's socket: serve its subjects here, or stop. */
  presenceChanged(agentId: string, holding: boolean, recorded?: Promise<void>): void {
    void this.presence.local(agentId, holding, new Date(), recorded);
    if (!holding) {
      for (const sub of this.#held.get(agentId) ?? []) sub.unsubscribe();
      this.#held.delete(agentId);
      return;
    }
    if (this.#held.has(agentId)) return;
    try {
      this.#held.set(agentId, [
        this.bus.subscribe(commandSubject(agentId), (body) => this.#serveCommand(agentId, body as CommandRequest), { queue: 'holder' }),
        this.bus.subscribe(controlSubject(agentId), (body) => this.#control(agentId, body as Control)),
      ]);
    } catch (err) {
      this.logger.warn({ err, agentId }, 'could not serve the agent on the cluster bus; other instances cannot reach it until it reconnects');
      return;
    }
    // Any older socket of this agent on another instance is closed there (4000), as it would be here.
    this.bus.publish(controlSubject(agentId), { op: 'replaced', by: this.instanceId } satisfies Control);
    void this.bus.flush().catch(() => undefined);
  }

  async #serveCommand(agentId: string, req: CommandRequest): Promise<CommandReply | JsonText> {
    try {
      const data = await this.hub.request(agentId, req.command, req.params as CommandParams<AgentCommand>, Math.min(Math.max(req.timeoutMs, 1_000), 3_600_000));
      const json = JSON.stringify(data ?? null);
      // Small answers go inline, written once: `{"ok":true,"data":…}` around the text just made.
      return json.length > INLINE_REPLY_LIMIT ? { ok: true, stored: await this.replies.store(json) } : new JsonText(`{"ok":true,"data":${json}}`);
    } catch (err) {
      if (err instanceof AppError) return { ok: false, code: err.code, message: err.message };
      this.logger.error({ err, agentId }, 'a command from another instance failed here');
      return { ok: false, code: 'INTERNAL_ERROR', message: 'The command failed on the server instance holding the agent' };
    }
  }

  #control(agentId: string, control: Control): void {
    if (control.by === this.instanceId) return;
    if (control.op === 'replaced') this.hub.replacedElsewhere(agentId);
    else if (control.op === 'deleted') this.hub.disconnect(agentId);
  }

  async #unwrap(reply: CommandReply): Promise<unknown> {
    if (reply.ok && 'stored' in reply) {
      const data = await this.replies.take(reply.stored);
      if (data === undefined) throw new AppError('INTERNAL_ERROR', "The agent's answer was lost between server instances");
      return data;
    }
    if (reply.ok) return reply.data;
    const code = (reply.code in ERROR_STATUS ? reply.code : 'INTERNAL_ERROR') as ErrorCode;
    throw new AppError(code, String(reply.message));
  }
}

function unavailable(): AppError {
  return new AppError('CLUSTER_UNAVAILABLE', 'The link between server instances (NATS) is down; commands for agents connected to another instance fail until it returns', {
    headers: { 'retry-after': '5' },
  });
}
