// One reference agent instance: registers, sends heartbeats on an interval, holds the agent WebSocket and
// answers commands against its own simulated device. Everything is per instance (state file, timers,
// sockets), so tests and the fleet simulator can run many in one process; stop() leaves nothing behind.
import { EventEmitter } from 'node:events';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { AgentCommand } from '../modules/agent-hub/agent-protocol.js';
import { AgentSocket, socketEventLine, type BackoffOptions, type SocketEvent } from './agent-socket.js';
import { BinaryHash } from './binary-hash.js';
import { recordReboot } from './commands/device.js';
import { commandHandlers, dispatchText } from './commands/index.js';
import type { CommandContext, CommandTable } from './commands/types.js';
import { driftConfig } from './config-drift.js';
import { DeviceStateStore, type DeviceView, type Platform, type SeedPeer } from './device-state.js';
import { heartbeatDocument } from './heartbeat-document.js';
import { reconnectWindowMs } from './reconnect-delay.js';
import { agentSocketUrl, ServerApi, ServerError, type HeartbeatAnswer } from './server-api.js';
import { SystemInfoCollector } from './system-info.js';
import { TunnelSessions, type TunnelSessionsOptions } from './tunnel-sessions.js';
import { AgentStreams } from './device-streams.js';
import { loadShellSupport, PTY_COMMANDS } from './device/pty-shell.js';
import { loadPty, type PtyLoader } from '../modules/terminal/pty-module.js';
import { CAPABILITY_COMMANDS, DEVICE_CAPABILITIES } from '../modules/agent-hub/device-protocol.js';
import type { ChecksSet, CheckResult } from '../modules/checks/check-protocol.js';
import { AgentChecks, CHECK_CAPABILITY, type AgentChecksSettings } from './checks/agent-checks.js';
import { checksFileFor } from './checks/check-store.js';

export const AGENT_VERSION = '1.0.0';
export const DEFAULT_BACKUP_FILE = fileURLToPath(new URL('./assets/sample-config.xml', import.meta.url));

export interface ReferenceAgentOptions {
  serverUrl: string;
  apiKey: string;
  stateFile: string;
  name?: string;
  /** Reuse this id (otherwise the one in the state file, otherwise the server assigns one). */
  agentId?: string;
  /** Reported hostname; default os.hostname(). */
  hostname?: string;
  platform?: Platform;
  heartbeatIntervalMs?: number;
  backupFile?: string;
  /**
   * The installed agent binary (the file the updater replaces): its SHA-256 goes with every heartbeat as
   * `agent_sha256`. None: the heartbeats carry no hash (the fleet's simulated agents have no binary).
   */
  binaryPath?: string;
  /** System data of a heartbeat (without agent_id/platform, which the agent adds); default: this machine's. */
  collectSystem?: () => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** WireGuard peers a fresh simulated device starts with (the fleet's firewall profile). */
  seedPeers?: readonly SeedPeer[];
  /** Chance per heartbeat that the simulated configuration changes (config-drift.ts); default never. */
  configChangeChance?: number;
  log?: (line: string) => void;
  /** How long a simulated reboot keeps the agent away. */
  rebootDowntimeMs?: number;
  backoff?: Partial<BackoffOptions>;
  silenceTimeoutMs?: number;
  agentVersion?: string;
  /** Commands answered as unknown, as an agent version that predates them would (tests of the server's fallbacks). */
  withoutCommands?: AgentCommand[];
  /** Loads the PTY library of the device shell (the real one, once per process, by default); tests make it fail. */
  loadPty?: PtyLoader;
  /**
   * Handlers of the device commands (issue 59) that replace ALL the real ones: the fleet simulator's
   * agents answer from their simulated device and must never list, kill or read anything of the host.
   * A device command missing here is unknown to the agent (and its capability is not announced).
   */
  deviceHandlers?: Partial<CommandTable>;
  /** Rewrites a tunnel's target (see TunnelSessionsOptions.tunnelTargets). */
  tunnelTargets?: TunnelSessionsOptions['tunnelTargets'];
  /**
   * Checks (issue 61): the agent announces `checks`, answers checks_set, runs the set and sends
   * check_results. On by default, off (false) for an agent that plays an older version; off by default
   * with deviceHandlers, since the fleet's simulated agents must never run anything on the host: with
   * deviceHandlers, checks need a `runCheck` of their own (the fleet's reads its simulated device).
   */
  checks?: AgentChecksSettings | false;
}

export interface ReferenceAgentEvents {
  registered: [agentId: string];
  /** `ms`: how long the server took to answer (the fleet simulator's latency figure). */
  heartbeat: [result: { ok: true; answer: HeartbeatAnswer; ms: number } | { ok: false; error: string }];
  connected: [];
  disconnected: [info: { code: number; reason: string }];
  reconnect_scheduled: [info: { attempt: number; delayMs: number }];
  command: [info: { id: string; command: string; success: boolean; error?: string }];
  rebooting: [];
  rebooted: [];
  /** A check of the current set finished a run (before its result is sent). */
  check_result: [result: CheckResult];
}

export function defaultPlatform(): Platform {
  return process.platform === 'win32' ? 'windows' : process.platform === 'freebsd' ? 'freebsd' : 'linux';
}

export class ReferenceAgent extends EventEmitter<ReferenceAgentEvents> {
  readonly platform: Platform;
  readonly hostname: string;
  private readonly intervalMs: number;
  private readonly log: (line: string) => void;
  private readonly abort = new AbortController();
  private readonly api: ServerApi;
  private readonly socket: AgentSocket;
  private readonly tunnels: TunnelSessions;
  /** Device sessions' streams (shell, file transfers) on the current socket. */
  private readonly streams = new AgentStreams((line) => this.log(line));
  private readonly collect: () => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** This machine's data, when no collectSystem was given. */
  private readonly collector: SystemInfoCollector | null;
  private readonly binary: BinaryHash | null;
  private readonly commands: Partial<CommandTable>;
  private readonly checks: AgentChecks | null;
  private store: DeviceStateStore | null = null;
  private id: string | null = null;
  private needsRegistration = true;
  private started = false;
  private stopped = false;
  private rebooting = false;
  /** Aborted on stop and on a simulated reboot: running commands (exec) end with the "machine". */
  private commandAbort = new AbortController();
  private readonly timers = new Set<NodeJS.Timeout>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private rebootTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ReferenceAgentOptions) {
    super();
    this.platform = options.platform ?? defaultPlatform();
    this.hostname = options.hostname ?? os.hostname();
    this.intervalMs = options.heartbeatIntervalMs ?? 60_000;
    this.log = options.log ?? (() => undefined);
    this.tunnels = new TunnelSessions({ log: (line) => this.log(line), ...(options.tunnelTargets ? { tunnelTargets: options.tunnelTargets } : {}) });
    this.commands = { ...commandHandlers };
    if (options.deviceHandlers) {
      for (const name of Object.values(CAPABILITY_COMMANDS).flat()) delete this.commands[name as AgentCommand];
      Object.assign(this.commands, options.deviceHandlers);
    }
    for (const name of options.withoutCommands ?? []) delete this.commands[name];
    this.api = new ServerApi(options.serverUrl, options.apiKey, this.abort.signal);
    const collector = options.collectSystem ? null : new SystemInfoCollector();
    this.collector = collector;
    this.collect = options.collectSystem ?? (() => collector!.collect(this.abort.signal) as unknown as Promise<Record<string, unknown>>);
    this.binary = options.binaryPath ? new BinaryHash(options.binaryPath, this.log) : null;
    const checks = options.checks ?? (options.deviceHandlers ? false : {});
    if (checks && options.deviceHandlers && !checks.runCheck) throw new Error('an agent with simulated device handlers runs checks only with a simulated runCheck');
    this.checks =
      checks === false
        ? null
        : new AgentChecks({
            ...checks,
            file: checks.file === undefined ? checksFileFor(options.stateFile) : checks.file,
            send: (text) => this.socket.send(text),
            log: (line) => this.log(line),
            onResult: (_check, result) => this.emit('check_result', result),
          });
    this.socket = new AgentSocket({
      url: () => agentSocketUrl(options.serverUrl, this.agentId ?? ''),
      apiKey: options.apiKey,
      backoff: { initialMs: 1000, maxMs: 60_000, stableAfterMs: 30_000, random: Math.random, ...options.backoff },
      silenceTimeoutMs: options.silenceTimeoutMs ?? 90_000,
      beforeConnect: () => (this.needsRegistration ? this.register() : Promise.resolve()),
      onText: (text) => void this.handleText(text),
      onBinary: (data) => {
        if (!this.streams.handleBinary(data)) this.tunnels.handleBinary(data);
      },
      onOpen: (ws) => {
        this.tunnels.attach(ws);
        this.streams.attach(ws);
        // First on every socket: what this agent can do beyond the spec's commands (issue 59).
        ws.send(JSON.stringify({ type: 'hello', capabilities: this.capabilities(), agent_version: this.options.agentVersion ?? AGENT_VERSION }));
      },
      onEvent: (event) => this.onSocketEvent(event),
    });
  }

  get agentId(): string | null {
    return this.id;
  }

  get connected(): boolean {
    return this.socket.connected;
  }

  /** The check set running now (from the server, or loaded at start); null without one or without checks. */
  get checkSet(): ChecksSet | null {
    return this.checks?.current ?? null;
  }

  /** Where the last check set is kept; null when the agent runs no checks. */
  get checksFile(): string | null {
    return this.checks?.file ?? null;
  }

  /** The simulated device as it is now (frozen). */
  get device(): DeviceView | null {
    return this.store?.device ?? null;
  }

  /**
   * Loads the device state, registers (retrying with backoff while the server is unreachable), sends the
   * first heartbeat and opens the WebSocket. Resolves once registered, or when stop() came first.
   */
  async start(): Promise<void> {
    if (this.started) throw new Error('agent already started');
    this.started = true;
    // The first CPU reading now: the first heartbeat reports the load since then, not since boot.
    await Promise.all([this.collector?.prime(), this.binary?.current(), this.shellSupport()]);
    this.store = await DeviceStateStore.open(this.options.stateFile, { platform: this.platform, node: this.hostname, ...(this.options.seedPeers ? { seedPeers: this.options.seedPeers } : {}) });
    this.id = this.options.agentId ?? this.store.agentId;
    // The last set runs before the server is reached: a device's checks matter most when it cannot be.
    await this.checks?.start();
    await this.registerWithRetry();
    if (this.stopped) return;
    this.socket.start();
    await this.heartbeatTick();
  }

  /** Closes the socket, cancels timers, requests and running commands; waits for the state file. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    this.commandAbort.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const timer of [this.heartbeatTimer, this.rebootTimer]) clearTimeout(timer);
    await Promise.all([this.socket.stop(), this.checks?.stop()]);
    await this.store?.flush();
    this.log('stopped');
  }

  /** Sends one heartbeat now (also used by tests); never throws. */
  async sendHeartbeat(): Promise<boolean> {
    try {
      const document = JSON.stringify(await this.heartbeatDocument());
      const sentAt = performance.now();
      let answer: HeartbeatAnswer;
      try {
        answer = await this.api.heartbeat(document);
      } catch (err) {
        if (!(err instanceof ServerError) || err.status !== 404) throw err;
        // The server forgot this agent (deleted): register again under the same id, then retry once.
        this.log('heartbeat: agent unknown to the server, registering again');
        await this.register();
        answer = await this.api.heartbeat(JSON.stringify(await this.heartbeatDocument()));
      }
      this.emit('heartbeat', { ok: true, answer, ms: performance.now() - sentAt });
      return true;
    } catch (err) {
      if (this.stopped) return false;
      const message = (err as Error).message;
      this.log(`heartbeat failed: ${message}`);
      this.emit('heartbeat', { ok: false, error: message });
      return false;
    }
  }

  private async heartbeatTick(): Promise<void> {
    this.heartbeatTimer = undefined;
    if (this.stopped || this.rebooting) return;
    await this.sendHeartbeat();
    if (this.store && Math.random() < (this.options.configChangeChance ?? 0)) {
      // A change that cannot be written (disk full) is skipped; the heartbeats go on regardless.
      await this.store.update(driftConfig).catch((err: unknown) => this.log(`could not record a configuration change: ${(err as Error).message}`));
    }
    if (this.stopped || this.rebooting || this.heartbeatTimer) return;
    this.heartbeatTimer = setTimeout(() => void this.heartbeatTick(), this.intervalMs);
  }

  private async heartbeatDocument(): Promise<Record<string, unknown>> {
    const [system, agentSha256] = await Promise.all([this.collect(), this.binary?.current()]);
    const identity = { agentId: this.id, platform: this.platform, hostname: this.hostname, agentVersion: this.options.agentVersion ?? AGENT_VERSION, agentSha256 };
    return heartbeatDocument(identity, system, this.store?.device ?? null);
  }

  private async register(): Promise<void> {
    const answer = await this.api.register({
      ...(this.id ? { agent_id: this.id } : {}),
      ...(this.options.name ? { name: this.options.name } : {}),
      hostname: this.hostname,
      platform: this.platform,
      agent_version: this.options.agentVersion ?? AGENT_VERSION,
    });
    this.id = answer.agent_id;
    this.needsRegistration = false;
    await this.store?.setAgentId(answer.agent_id);
    this.log(`registered as ${answer.agent_id}${answer.pre_registered ? ' (pre-registered record adopted)' : ''}`);
    this.emit('registered', answer.agent_id);
  }

  private async registerWithRetry(): Promise<void> {
    const { initialMs = 1000, maxMs = 60_000, random = Math.random } = this.options.backoff ?? {};
    for (let rung = 0; !this.stopped; rung++) {
      try {
        await this.register();
        return;
      } catch (err) {
        if (this.stopped) return;
        // Full jitter here too: a fleet that starts while the server is down must not retry in step.
        const delay = Math.floor(random() * (reconnectWindowMs({ initialMs, maxMs }, rung) + 1));
        this.log(`registration failed: ${(err as Error).message}; retrying in ${(delay / 1000).toFixed(1)} s`);
        await this.sleep(delay);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.timers.delete(timer);
        this.abort.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.timers.add(timer);
      this.abort.signal.addEventListener('abort', done, { once: true });
    });
  }

  private async handleText(text: string): Promise<void> {
    const ctx: CommandContext = {
      device: this.store as DeviceStateStore,
      backupFile: this.options.backupFile ?? DEFAULT_BACKUP_FILE,
      signal: this.commandAbort.signal,
      scheduleReboot: (delay) => this.scheduleReboot(delay),
      now: () => new Date(),
      tunnels: this.tunnels,
      streams: this.streams,
    };
    // checks_set first: it is check-protocol.ts's command, not one of the table's. Other frames go
    // straight to the table, without an await in between: a pty_resize must not fall behind the
    // keystrokes that follow it as binary frames.
    const forChecks = this.checks && text.includes('"checks_set"') ? await this.checks.handleText(text) : null;
    const result = forChecks ?? (await dispatchText(text, ctx, this.commands));
    if (result.kind === 'dropped') {
      this.log(`dropped a frame from the server: ${result.reason}`);
      return;
    }
    const { frame } = result;
    const error = frame.success ? undefined : frame.error;
    this.log(`command ${result.command} (${frame.id}) ${frame.success ? 'ok' : `failed: ${error}`}`);
    if (!this.socket.send(result.text)) this.log(`answer to ${frame.id} lost: not connected`);
    this.emit('command', { id: frame.id, command: result.command, success: frame.success, ...(error !== undefined ? { error } : {}) });
  }

  /** Without its PTY library the agent has no device shell: the pty commands leave its table (and `shell` its capabilities). */
  private async shellSupport(): Promise<void> {
    if (!this.commands.pty_open || this.options.deviceHandlers) return; // a simulated shell needs no PTY library
    const support = this.options.loadPty ? await loadPty(this.options.loadPty) : await loadShellSupport();
    if (support.available) return;
    this.log(`no device shell: ${support.reason}`);
    for (const name of PTY_COMMANDS) delete this.commands[name];
  }

  /** The capabilities whose every command this agent answers (withoutCommands removes some), and `checks`. */
  capabilities(): string[] {
    const device: string[] = DEVICE_CAPABILITIES.filter((c) => CAPABILITY_COMMANDS[c].every((command) => this.commands[command as AgentCommand] !== undefined));
    return this.checks && !device.includes(CHECK_CAPABILITY) ? [...device, CHECK_CAPABILITY] : device;
  }

  private onSocketEvent(event: SocketEvent): void {
    this.log(socketEventLine(event));
    if (event.type === 'connected') {
      this.emit('connected');
      this.checks?.connected(); // after the hello (sent on open): results that waited go out
    } else if (event.type === 'disconnected') this.emit('disconnected', { code: event.code, reason: event.reason });
    else if (event.type === 'reconnect_scheduled') this.emit('reconnect_scheduled', { attempt: event.attempt, delayMs: event.delayMs });
    else if (event.type === 'error' && event.status === 404) this.needsRegistration = true;
  }

  private scheduleReboot(delaySeconds: number): void {
    clearTimeout(this.rebootTimer);
    this.log(`reboot in ${delaySeconds} s`);
    this.rebootTimer = setTimeout(() => void this.simulateReboot(), delaySeconds * 1000);
  }

  /** A simulated reboot: recorded on the device, away for rebootDowntimeMs. */
  private async simulateReboot(): Promise<void> {
    await this.goAway(this.options.rebootDowntimeMs ?? 5000, true);
  }

  /**
   * The device goes away (socket closed, no heartbeats) for `downtimeMs`, then comes back; the fleet
   * simulator's stale and offline agents. Nothing happens while it is already away.
   */
  async goAway(downtimeMs: number, reboot = false): Promise<void> {
    if (this.stopped || this.rebooting) return;
    this.rebooting = true;
    this.log(reboot ? 'rebooting' : `going away for ${Math.round(downtimeMs / 1000)} s`);
    if (reboot) this.emit('rebooting');
    clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
    this.commandAbort.abort();
    this.commandAbort = new AbortController();
    if (reboot) await this.store?.update((device) => recordReboot(device, new Date())).catch((err: unknown) => this.log(`reboot: ${(err as Error).message}`));
    await this.socket.stop(1001, reboot ? 'rebooting' : 'going away');
    if (this.stopped) return;
    await this.sleep(downtimeMs);
    if (this.stopped) return;
    this.rebooting = false;
    this.log(reboot ? 'back from reboot' : 'back');
    if (reboot) this.emit('rebooted');
    this.socket.start();
    await this.heartbeatTick();
  }
}
