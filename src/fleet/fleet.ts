// A fleet of simulated agents in one process: each one a real ReferenceAgent (its own registration,
// heartbeats over HTTP, WebSocket and command handling, state file), playing a firewall, a hypervisor host
// or a Windows machine with SimulatedSystem's moving data. Starts are spread over a window so heartbeats
// do not arrive in one burst, and now and then an agent goes away long enough to turn stale or offline,
// then comes back. Lost sockets reconnect as the reference agent's do (full jitter, agent/reconnect-delay.ts),
// so a fleet whose server instance died comes back spread over seconds, like a real one. Their screens are
// one test screen (simulated-vnc.ts) per fleet, which their tunnels to the VNC default reach.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Platform } from '../agent/device-state.js';
import { ReferenceAgent } from '../agent/reference-agent.js';
import { SimulatedChecks } from './simulated-checks.js';
import { LazyDevice, simulatedDeviceHandlers } from './simulated-device.js';
import { SimulatedSystem } from './simulated-system.js';
import { SimulatedVncServer } from './simulated-vnc.js';

/** The VNC server's usual address on a device, which a remote desktop's tunnel targets by default. */
const VNC_DEFAULT_PORT = 5900;
const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '::1']);

/** Shares of the platforms in a fleet: MSP fleets are mostly firewalls and Windows machines. */
export const DEFAULT_MIX: Readonly<Record<Platform, number>> = { freebsd: 0.4, linux: 0.2, windows: 0.4 };

export interface FleetOptions {
  serverUrl: string;
  /** An API key with the `agent` permission. */
  apiKey: string;
  agents: number;
  intervalMs: number;
  /** One state file per agent is kept here (ids survive a restart of the fleet). */
  stateDir: string;
  /** Agent names are `<prefix>-<n>`; registration adopts pre-registered agents of that name. */
  namePrefix?: string;
  mix?: Readonly<Record<Platform, number>>;
  /** Starts are spread evenly over this window (default: one interval). */
  startSpreadMs?: number;
  /** On average one agent goes away per this many ms (0: never; default 10 intervals). */
  outageEveryMs?: number;
  /** The agents' checks (issue 61): false runs none and announces none; default on, simulated. */
  checks?: boolean;
  /** Chance per run that a healthy network or plugin check starts a failure spell; default 1 %. */
  checkFailureChance?: number;
  /** The chance behind the simulated checks' results and schedules; default Math.random. */
  random?: () => number;
  log?: (line: string) => void;
}

export interface FleetStats {
  agents: number;
  registered: number;
  connected: number;
  away: number;
  heartbeatsOk: number;
  heartbeatsFailed: number;
  /** Why heartbeats failed: each distinct error message (digits as #) and how often, at most 20 kinds. */
  failureReasons: Record<string, number>;
  /** checks_set commands the agents answered (accepted sets), and check results they produced. */
  checkSetsAccepted: number;
  checkResults: number;
}

const MAX_FAILURE_REASONS = 20;

const HOSTNAMES: Record<Platform, (n: number) => string> = {
  freebsd: (n) => `fw-${String(n).padStart(4, '0')}.msp.example`,
  linux: (n) => `pve-${String(n).padStart(4, '0')}`,
  windows: (n) => `WS-${String(n).padStart(5, '0')}`,
};

/** The platform of agent `n` (0-based): the mix, interleaved so any prefix of the fleet is mixed too. */
export function platformOf(n: number, mix: Readonly<Record<Platform, number>> = DEFAULT_MIX): Platform {
  const total = mix.freebsd + mix.linux + mix.windows;
  const position = ((n * 0.618033988749895) % 1) * total; // golden-ratio spacing: evenly spread, not striped
  if (position < mix.freebsd) return 'freebsd';
  return position < mix.freebsd + mix.linux ? 'linux' : 'windows';
}

export class Fleet {
  readonly members: ReferenceAgent[] = [];
  /** Server answer times of successful heartbeats since the last takeLatencies(). */
  #latencies: number[] = [];
  #stats = { registered: 0, heartbeatsOk: 0, heartbeatsFailed: 0, checkSetsAccepted: 0, checkResults: 0 };
  /** Per agent (by index), when it last accepted a check set: how long a policy change took to reach them all. */
  readonly #checkSetAt: number[] = [];
  #failureReasons = new Map<string, number>();
  #away = 0;
  /** Pending waits: stop() cancels the timers and lets their waiters go on (and find the fleet stopped). */
  #waits = new Map<NodeJS.Timeout, () => void>();
  #stopped = false;
  /** Every agent's screen (started before the agents, so a desktop opened at once finds it). */
  readonly #screen = new SimulatedVncServer();
  #screenAddress: { host: string; port: number } | null = null;

  constructor(private readonly options: FleetOptions) {}

  /** Creates every agent and starts them over the spread window; resolves once all have started. */
  async start(): Promise<void> {
    const { agents, intervalMs, stateDir, namePrefix = 'sim' } = this.options;
    await mkdir(stateDir, { recursive: true });
    this.#screenAddress = await this.#screen.start();
    const spread = this.options.startSpreadMs ?? intervalMs;
    const starts: Promise<void>[] = [];
    for (let n = 0; n < agents && !this.#stopped; n++) {
      const agent = this.#create(n, namePrefix, path.join(stateDir, `${namePrefix}-${n}.json`));
      this.members.push(agent);
      starts.push(this.#after((spread * n) / agents).then(() => (this.#stopped ? undefined : agent.start())));
    }
    await Promise.all(starts);
    this.#scheduleOutage();
  }

  get stats(): FleetStats {
    return { agents: this.members.length, ...this.#stats, failureReasons: Object.fromEntries(this.#failureReasons), connected: this.members.filter((a) => a.connected).length, away: this.#away };
  }

  /** How many agents accepted a check set at `since` or later, and when the last of them did (ms since the epoch). */
  checkSetsSince(since: number): { agents: number; lastAt: number | null } {
    let agents = 0;
    let lastAt: number | null = null;
    for (const at of this.#checkSetAt) {
      if (at === undefined || at < since) continue;
      agents++;
      lastAt = Math.max(lastAt ?? at, at);
    }
    return { agents, lastAt };
  }

  /** Heartbeat answer times (ms) collected since the previous call. */
  takeLatencies(): number[] {
    const taken = this.#latencies;
    this.#latencies = [];
    return taken;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const [timer, resolve] of this.#waits) {
      clearTimeout(timer);
      resolve();
    }
    this.#waits.clear();
    await Promise.all(this.members.map((agent) => agent.stop()));
    await this.#screen.stop();
  }

  /** A tunnel to a device's own VNC port reaches the test screen; any other target is left as it is. */
  #tunnelTarget = (host: string, port: number): { host: string; port: number } =>
    port === VNC_DEFAULT_PORT && LOOPBACK_NAMES.has(host) && this.#screenAddress ? this.#screenAddress : { host, port };

  #create(n: number, prefix: string, stateFile: string): ReferenceAgent {
    const platform = platformOf(n, this.options.mix);
    const hostname = HOSTNAMES[platform](n + 1);
    const system = new SimulatedSystem(platform, hostname);
    const device = new LazyDevice(platform);
    const random = this.options.random ?? Math.random;
    // Checks run against the simulated device: nothing is executed, connected or resolved on this machine.
    const checks = this.options.checks === false ? false : { runCheck: new SimulatedChecks({ platform, device, system, random, ...(this.options.checkFailureChance !== undefined ? { failureChance: this.options.checkFailureChance } : {}) }).run, random, file: null };
    const agent: ReferenceAgent = new ReferenceAgent({
      serverUrl: this.options.serverUrl,
      apiKey: this.options.apiKey,
      stateFile,
      name: `${prefix}-${n + 1}`,
      hostname,
      platform,
      heartbeatIntervalMs: this.options.intervalMs,
      collectSystem: () => system.collect(agent.device),
      seedPeers: system.seedPeers(),
      // Processes, services, files and the shell of the simulated device: never the simulator's machine.
      deviceHandlers: simulatedDeviceHandlers(platform, hostname, device),
      checks,
      tunnelTargets: this.#tunnelTarget,
      // A firewall's configuration changes about every five minutes, so a demo's backups taken a while
      // apart have something to compare.
      ...(platform === 'freebsd' ? { configChangeChance: Math.min(1, this.options.intervalMs / 300_000) } : {}),
      ...(this.options.log ? { log: (line: string) => this.options.log!(`${prefix}-${n + 1}: ${line}`) } : {}),
    });
    agent.on('registered', () => this.#stats.registered++);
    agent.on('check_result', () => this.#stats.checkResults++);
    agent.on('command', (info) => {
      if (info.command !== 'checks_set' || !info.success) return;
      this.#stats.checkSetsAccepted++;
      this.#checkSetAt[n] = Date.now();
    });
    agent.on('heartbeat', (result) => {
      if (!result.ok) return this.#countFailure(result.error);
      this.#stats.heartbeatsOk++;
      this.#latencies.push(result.ms);
    });
    return agent;
  }

  #countFailure(error: string): void {
    this.#stats.heartbeatsFailed++;
    // Counted by kind, not by agent: ids, ports and times vary between otherwise equal failures.
    const reason = error.slice(0, 120).replace(/[0-9]+/g, '#');
    const count = this.#failureReasons.get(reason);
    if (count !== undefined || this.#failureReasons.size < MAX_FAILURE_REASONS) this.#failureReasons.set(reason, (count ?? 0) + 1);
  }

  /** Now and then one agent goes away: for 2.5–4.5 minutes (stale), or 6–10 (offline). */
  #scheduleOutage(): void {
    const every = this.options.outageEveryMs ?? this.options.intervalMs * 10;
    if (every <= 0 || this.#stopped || this.members.length === 0) return;
    void this.#after(every * (0.5 + Math.random())).then(() => {
      if (this.#stopped) return;
      const agent = this.members[Math.floor(Math.random() * this.members.length)]!;
      const minutes = Math.random() < 0.6 ? 2.5 + Math.random() * 2 : 6 + Math.random() * 4;
      if (agent.connected) {
        this.#away++;
        void agent.goAway(minutes * 60_000).finally(() => this.#away--);
      }
      this.#scheduleOutage();
    });
  }

  #after(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waits.delete(timer);
        resolve();
      }, ms);
      this.#waits.set(timer, resolve);
    });
  }
}
