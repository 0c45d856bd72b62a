// Tunnels in cluster mode (issue 32, build 2). A tunnel lives on the instance holding its agent's
// socket: that instance opens the proxy port and advertises where it is (ADVERTISE_ADDRESS). The other
// instances reach it over the bus for the small things only: open (on `rmm.instance.<id>.tunnels`, the
// holder found through presence), list, and, per tunnel, close and "where are you"
// (`rmm.tunnel.<tid>`, served by the one instance that has the tunnel, so nobody answering means no
// such tunnel: 404). The bytes never cross the bus (it has no flow control; a slow reader gets the whole
// NATS connection cut): a proxy WebSocket reaching another instance is forwarded to the holder over
// plain HTTP between instances (tunnels/proxy-forward.ts), where the holder checks the caller itself.
import type { Subscription } from '@nats-io/transport-node';
import type { AddressInfo } from 'node:net';
import { AppError, ERROR_STATUS, type ErrorCode } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import { AllowList, parseAllowEntry } from '../tunnels/allow-list.js';
import type { RemoteOpen, RemoteTunnels, TunnelHolder } from '../tunnels/remote-tunnels.js';
import { tunnelDto, tunnelWithTrafficDto, type TunnelDto, type TunnelWithTrafficDto } from '../tunnels/tunnel-dto.js';
import type { Tunnel, TunnelManager } from '../tunnels/tunnel-manager.js';
import { BusError, type ClusterBus } from './cluster-bus.js';
import type { ClusterPresence } from './presence.js';

const instanceSubject = (instanceId: string) => `rmm.instance.${instanceId}.tunnels`;
const tunnelSubject = (tunnelId: string) => `rmm.tunnel.${tunnelId}`;
/** Opening listens on a port and lists are in memory: the holder answers at once or is in trouble. */
const ASK_MS = 10_000;

type InstanceAsk = { op: 'open'; agentId: string; open: RemoteOpen } | { op: 'list'; agentId: string } | { op: 'holder'; agentId: string };
type TunnelAsk = { op: 'where' } | { op: 'close'; agentId: string };
type Failure = { ok: false; code: string; message: string };
type Answer<T> = { ok: true; value: T } | Failure;

/**
 * The URL other instances reach this one's API server at: its HOST when that is one address, else its
 * ADVERTISE_ADDRESS (the host clients already reach it at), with the port it actually listens on.
 */
export function internalUrlOf(address: AddressInfo | string | null, host: string, advertiseAddress: string): string | undefined {
  if (!address || typeof address === 'string') return undefined;
  const name = host === '0.0.0.0' || host === '::' ? advertiseAddress : host;
  return `http://${name.includes(':') ? `[${name}]` : name}:${address.port}`;
}

export class ClusterTunnels implements RemoteTunnels {
  readonly #served = new Map<string, Subscription>();

  constructor(
    private readonly tunnels: TunnelManager,
    private readonly hub: AgentHub,
    private readonly bus: ClusterBus,
    private readonly presence: ClusterPresence,
    readonly instanceId: string,
    private readonly advertiseAddress: string,
    /** This instance's API server URL for the others; undefined until it listens. */
    private readonly localUrl: () => string | undefined,
    private readonly logger: Logger,
  ) {}

  /** Answers for this instance's tunnels: opens them for the others, and serves each one's own subject. */
  serve(): void {
    this.bus.subscribe(instanceSubject(this.instanceId), (body) => this.#answerInstance(body as InstanceAsk));
    this.tunnels.onTunnelChange = (tunnel, open) => this.#tunnelChanged(tunnel, open);
    for (const tunnel of this.tunnels.list()) this.#tunnelChanged(tunnel, true);
  }

  async open(agentId: string, request: RemoteOpen): Promise<TunnelDto | undefined> {
    const holder = this.#holderElsewhere(agentId);
    if (!holder) return undefined;
    return this.#unwrap(await this.#ask<TunnelDto>(instanceSubject(holder), { op: 'open', agentId, open: request }, 'AGENT_NOT_CONNECTED'));
  }

  async list(agentId: string): Promise<TunnelWithTrafficDto[]> {
    const holder = this.#holderElsewhere(agentId);
    if (!holder) return [];
    const answer = await this.#ask<TunnelWithTrafficDto[]>(instanceSubject(holder), { op: 'list', agentId }, 'AGENT_NOT_CONNECTED');
    // The holder let go of the agent meanwhile: its tunnels closed with its socket.
    if (!answer.ok && answer.code === 'AGENT_NOT_CONNECTED') return [];
    return this.#unwrap(answer);
  }

  async locateAgent(agentId: string): Promise<TunnelHolder | undefined> {
    const holder = this.#holderElsewhere(agentId);
    if (!holder) return undefined;
    const answer = await this.#ask<TunnelHolder>(instanceSubject(holder), { op: 'holder', agentId }, 'AGENT_NOT_CONNECTED');
    if (!answer.ok && answer.code === 'AGENT_NOT_CONNECTED') return undefined;
    return this.#unwrap(answer);
  }

  async close(agentId: string, tunnelId: string): Promise<boolean> {
    const answer = await this.#ask<boolean>(tunnelSubject(tunnelId), { op: 'close', agentId }, 'NOT_FOUND');
    if (!answer.ok && answer.code === 'NOT_FOUND') return false;
    return this.#unwrap(answer);
  }

  async locate(tunnelId: string): Promise<TunnelHolder | undefined> {
    const answer = await this.#ask<TunnelHolder | null>(tunnelSubject(tunnelId), { op: 'where' }, 'NOT_FOUND');
    if (!answer.ok && answer.code === 'NOT_FOUND') return undefined;
    return this.#unwrap(answer) ?? undefined;
  }

  #holderElsewhere(agentId: string): string | undefined {
    if (this.hub.isConnected(agentId)) return undefined;
    const holder = this.presence.holderOf(agentId);
    return holder === this.instanceId ? undefined : holder;
  }

  /** Asks over the bus; "nobody answers" becomes `missing`, the other bus failures 504 or 503. */
  async #ask<T>(subject: string, body: InstanceAsk | TunnelAsk, missing: ErrorCode): Promise<Answer<T>> {
    if (!this.bus.available) throw unavailable();
    try {
      return (await this.bus.request(subject, body, ASK_MS)) as Answer<T>;
    } catch (err) {
      if (!(err instanceof BusError)) throw err;
      if (err.failure === 'no-responders') return { ok: false, code: missing, message: missing === 'NOT_FOUND' ? 'Tunnel not found' : 'The agent is not connected' };
      if (err.failure === 'timeout') throw new AppError('AGENT_TIMEOUT', "The server instance holding the agent's connection did not answer about its tunnels");
      throw unavailable();
    }
  }

  #unwrap<T>(answer: Answer<T>): T {
    if (answer.ok) return answer.value;
    const code = (answer.code in ERROR_STATUS ? answer.code : 'INTERNAL_ERROR') as ErrorCode;
    throw new AppError(code, String(answer.message));
  }

  async #answerInstance(ask: InstanceAsk): Promise<Answer<unknown>> {
    try {
      if (ask.op === 'holder') {
        const url = this.localUrl();
        if (!this.hub.isConnected(ask.agentId) || !url) return { ok: false, code: 'AGENT_NOT_CONNECTED', message: 'The agent is not connected' };
        return { ok: true, value: { instanceId: this.instanceId, url } };
      }
      if (ask.op === 'list') {
        if (!this.hub.isConnected(ask.agentId)) return { ok: false, code: 'AGENT_NOT_CONNECTED', message: 'The agent is not connected' };
        return { ok: true, value: this.tunnels.list(ask.agentId).map((t) => tunnelWithTrafficDto(this.tunnels, t, this.advertiseAddress)) };
      }
      const { targetHost, targetPort, allowFrom, openedBy } = ask.open;
      // Entries were checked where the request arrived; parsed again here, anything odd is left out (lets fewer in).
      const allow = new AllowList(allowFrom.flatMap((entry) => parseAllowEntry(entry) ?? []));
      const tunnel = await this.tunnels.open(ask.agentId, targetHost, targetPort, { allowFrom: allow, openedBy });
      return { ok: true, value: tunnelDto(tunnel, this.advertiseAddress) };
    } catch (err) {
      if (err instanceof AppError) return { ok: false, code: err.code, message: err.message };
      this.logger.error({ err, agentId: ask.agentId }, 'a tunnel request from another instance failed here');
      return { ok: false, code: 'INTERNAL_ERROR', message: 'The tunnel request failed on the server instance holding the agent' };
    }
  }

  async #answerTunnel(tunnelId: string, ask: TunnelAsk): Promise<Answer<unknown>> {
    if (ask.op === 'close') {
      const closed = await this.tunnels.close(ask.agentId, tunnelId);
      return closed ? { ok: true, value: true } : { ok: false, code: 'NOT_FOUND', message: 'Tunnel not found' };
    }
    const url = this.localUrl();
    if (!this.tunnels.find(tunnelId) || !url) return { ok: false, code: 'NOT_FOUND', message: 'Tunnel not found' };
    return { ok: true, value: { instanceId: this.instanceId, url } satisfies TunnelHolder };
  }

  #tunnelChanged(tunnel: Tunnel, open: boolean): void {
    if (!open) {
      this.#served.get(tunnel.id)?.unsubscribe();
      this.#served.delete(tunnel.id);
      return;
    }
    if (this.#served.has(tunnel.id)) return;
    try {
      this.#served.set(tunnel.id, this.bus.subscribe(tunnelSubject(tunnel.id), (body) => this.#answerTunnel(tunnel.id, body as TunnelAsk)));
      // The opener may use the tunnel through another instance right after the answer: make the subject known first.
      void this.bus.flush().catch(() => undefined);
    } catch (err) {
      this.logger.warn({ err, tunnelId: tunnel.id }, 'could not serve the tunnel on the cluster bus; other instances cannot reach or close it');
    }
  }
}

function unavailable(): AppError {
  return new AppError('CLUSTER_UNAVAILABLE', 'The link between server instances (NATS) is down; tunnels of agents connected to another instance cannot be reached until it returns', {
    headers: { 'retry-after': '5' },
  });
}
