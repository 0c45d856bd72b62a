// Remote access to a device through its agent (issue 60): a remote desktop (VNC through noVNC in the
// browser), an RDP tunnel for the technician's own client, and a tunnel to the device's own web
// interface. Each is a tunnel (tunnels/tunnel-manager.ts) with stricter terms than POST /tunnel gives,
// and each is a device session: a row and start/end audit entries with duration and bytes.
// - A desktop is reachable only through its proxy WebSocket, only by the sign-in session that opened it
//   (its proxy port lets nobody in), ends with that WebSocket (the tab closing) or after a time without
//   keyboard or mouse input; read users get view-only ones when the setting allows, their input dropped
//   on the server (rfb-client-stream.ts), not merely hidden in the browser.
// - RDP and web-interface tunnels let in the opener's own address only, and close at a time limit.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Agent, AgentService } from '../agents/agents.service.js';
import { levelOf } from '../auth/access-policy.js';
import type { Caller } from '../auth/caller.js';
import type { DeviceSessionLog } from '../device-sessions/session-log.js';
import type { SettingsService } from '../settings/settings.service.js';
import { AllowList } from '../tunnels/allow-list.js';
import type { Tunnel, TunnelEnd, TunnelManager, TunnelPurpose, TunnelTerms } from '../tunnels/tunnel-manager.js';
import { readTargets, writeTargets, type StoredTargets } from './remote-targets.repo.js';
import { RfbClientStream } from './rfb-client-stream.js';

/** A desktop's WebSocket must connect this soon after it was opened, or the tunnel closes. */
const DESKTOP_CONNECT_WITHIN_MS = 60_000;
/** How often a desktop's input is looked at for its idle limit. */
const IDLE_CHECK_MS = 30_000;
export const DEFAULT_VNC = { host: '127.0.0.1', port: 5900 } as const;
const DEFAULT_RDP_PORT = 3389;

export interface RemoteTargets {
  vnc_host: string;
  vnc_port: number;
  /** The RDP port on the device's loopback (Windows' PortNumber setting; default 3389). */
  rdp_port: number;
  /** The device's web interface port: the agent's own, else its platform's from the settings; null for none. */
  web_port: number | null;
}

export interface OpenedDesktop {
  tunnel: Tunnel;
  viewOnly: boolean;
  idleMinutes: number;
}

export class RemoteAccess {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly agents: AgentService,
    private readonly tunnels: TunnelManager,
    private readonly settings: SettingsService,
    private readonly sessions: DeviceSessionLog,
  ) {}

  async targets(caller: Caller, agentId: string): Promise<RemoteTargets> {
    return this.#targetsOf(await this.agents.get(caller, agentId));
  }

  async setTargets(caller: Caller, agentId: string, patch: Partial<RemoteTargets>): Promise<RemoteTargets> {
    const agent = await this.agents.get(caller, agentId);
    const stored = await readTargets(this.db, agent.id);
    const next: StoredTargets = {
      vnc_host: patch.vnc_host ?? stored?.vnc_host ?? DEFAULT_VNC.host,
      vnc_port: patch.vnc_port ?? stored?.vnc_port ?? DEFAULT_VNC.port,
      rdp_port: patch.rdp_port ?? stored?.rdp_port ?? DEFAULT_RDP_PORT,
      web_port: patch.web_port !== undefined ? patch.web_port : (stored?.web_port ?? null),
    };
    await writeTargets(this.db, agent.id, next, this.clock.now());
    return this.#targetsOf(agent);
  }

  /** A desktop for `caller`'s sign-in session; read users only view-only, and only when the setting allows. */
  async openDesktop(caller: Caller, agentId: string, wish: { viewOnly: boolean; ip: string }): Promise<OpenedDesktop> {
    if (caller.kind !== 'user' || !caller.sessionId) throw new AppError('FORBIDDEN', 'A remote desktop takes a signed-in user; API keys never open one');
    const agent = await this.agents.get(caller, agentId);
    const settings = await this.settings.device();
    const reader = levelOf(caller) === 'read';
    if (reader && !settings.remote_desktop_read_view_only) {
      throw new AppError('FORBIDDEN', 'A remote desktop needs the write or admin role (read users may view only when the setting remote_desktop_read_view_only is on)');
    }
    const viewOnly = reader || wish.viewOnly;
    const idleMs = settings.remote_desktop_idle_minutes * 60_000;
    const { vnc_host: host, vnc_port: port } = await this.#targetsOf(agent);
    let lastInput = this.clock.now().getTime();
    let stopIdleWatch = () => undefined as void;
    const tunnel = await this.#open(agent, caller, wish.ip, 'desktop', host, port, [], {
      sessionBound: true,
      viewOnly,
      maxSessions: 1,
      endsWithSession: { connectWithinMs: DESKTOP_CONNECT_WITHIN_MS },
      watch: () => new RfbClientStream({ viewOnly, onInput: () => (lastInput = this.clock.now().getTime()) }),
      onEnd: () => stopIdleWatch(),
    });
    stopIdleWatch = this.#watchIdle(tunnel, idleMs, () => lastInput);
    return { tunnel, viewOnly, idleMinutes: settings.remote_desktop_idle_minutes };
  }

  /** A tunnel to the Windows device's RDP port, for clients from `allowFrom`, until the launch time limit. */
  async openRdp(caller: Caller, agentId: string, allowFrom: string[], ip: string): Promise<Tunnel> {
    const agent = await this.agents.get(caller, agentId);
    if (agent.platform !== 'windows') throw new AppError('AGENT_UNSUPPORTED', 'RDP is for Windows agents');
    const { rdp_port: port } = await this.#targetsOf(agent);
    return this.#open(agent, caller, ip, 'rdp', '127.0.0.1', port, allowFrom, { expiresAt: await this.#launchLimit() });
  }

  /** A tunnel to the device's own web interface (its port, or `port`), for clients from `allowFrom`, until the time limit. */
  async openWeb(caller: Caller, agentId: string, port: number | undefined, allowFrom: string[], ip: string): Promise<Tunnel> {
    const agent = await this.agents.get(caller, agentId);
    const target = port ?? (await this.#targetsOf(agent)).web_port;
    if (target === null) throw new AppError('VALIDATION_ERROR', 'This agent has no web interface port: give one (port), or set the agent\'s web_port');
    return this.#open(agent, caller, ip, 'web', '127.0.0.1', target, allowFrom, { expiresAt: await this.#launchLimit() });
  }

  async #launchLimit(): Promise<Date> {
    return new Date(this.clock.now().getTime() + (await this.settings.device()).remote_launch_minutes * 60_000);
  }

  async #targetsOf(agent: Agent): Promise<RemoteTargets> {
    const stored = await readTargets(this.db, agent.id);
    const settings = await this.settings.device();
    const platformPort = agent.platform === 'freebsd' ? settings.web_interface_port_freebsd : agent.platform === 'linux' ? settings.web_interface_port_linux : null;
    return {
      vnc_host: stored?.vnc_host ?? DEFAULT_VNC.host,
      vnc_port: stored?.vnc_port ?? DEFAULT_VNC.port,
      rdp_port: stored?.rdp_port ?? DEFAULT_RDP_PORT,
      web_port: stored?.web_port ?? platformPort,
    };
  }

  /** Opens the tunnel and records it as a device session, ended (with its bytes) when the tunnel closes. */
  async #open(
    agent: Agent,
    caller: Caller,
    ip: string,
    kind: Exclude<TunnelPurpose, 'tunnel'>,
    host: string,
    port: number,
    allowFrom: string[],
    terms: Omit<TunnelTerms, 'purpose' | 'onClose'> & { onEnd?: () => void },
  ): Promise<Tunnel> {
    const { onEnd, ...rest } = terms;
    // The tunnel may close while its start is being recorded (the agent went away): its end waits for it.
    const ending: { record?: (end: TunnelEnd) => void; early?: TunnelEnd } = {};
    const tunnel = await this.tunnels.open(
      agent.id,
      host,
      port,
      { allowFrom: new AllowList(allowFrom), openedBy: caller },
      {
        ...rest,
        purpose: kind,
        onClose: (_t, end) => {
          onEnd?.();
          if (ending.record) ending.record(end);
          else ending.early = end;
        },
      },
    );
    let ended: Awaited<ReturnType<DeviceSessionLog['start']>>;
    try {
      ended = await this.sessions.start({ id: tunnel.id, kind, agent, caller, ip, subject: `${host}:${port}` });
    } catch (err) {
      // Not recorded (the database is away): no way into the device may stay open unaudited.
      await this.tunnels.close(agent.id, tunnel.id);
      throw err;
    }
    ending.record = (end) => void ended({ reason: end, bytesIn: tunnel.traffic.bytesIn, bytesOut: tunnel.traffic.bytesOut, status: 200 });
    if (ending.early) ending.record(ending.early);
    return tunnel;
  }

  /** Closes the desktop once nobody has touched keyboard or mouse for `idleMs`; returns the stop. */
  #watchIdle(tunnel: Tunnel, idleMs: number, lastInput: () => number): () => void {
    let cancel = () => undefined as void;
    const check = () => {
      if (!this.tunnels.find(tunnel.id)) return; // closed meanwhile (before its stop was known)
      const quiet = this.clock.now().getTime() - lastInput();
      if (quiet >= idleMs) return void this.tunnels.closeIdle(tunnel);
      cancel = this.clock.timer(Math.min(IDLE_CHECK_MS, idleMs - quiet), check);
    };
    cancel = this.clock.timer(Math.min(IDLE_CHECK_MS, idleMs), check);
    return () => cancel();
  }
}
