// The processes and services of one simulated device of the fleet (issue 59), and the device command
// handlers the fleet's agents answer with instead of the real ones: a demo lists, kills, starts and stops
// things on the simulated device only, never on the machine the simulator runs on. State is created on
// the first use (10,000 agents in one process mostly never get asked) and kept per agent: a kill or a
// stop shows in the next listing, a start gives the service new pids.
import type { Platform } from '../agent/device-state.js';
import { CommandError, type CommandTable } from '../agent/commands/types.js';
import type { DeviceProcess, DeviceService } from '../modules/agent-hub/device-protocol.js';
import { CATALOGS, type Catalog, type CatalogProcess } from './device-catalog.js';
import { simulatedFileHandlers } from './simulated-files.js';
import { simulatedShellHandlers } from './simulated-shell.js';

interface LiveProcess extends CatalogProcess {
  pid: number;
  ppid: number;
  startedAt: string;
  /** The service it belongs to, if any. */
  service: string | null;
  /** The service's main process: killing it takes the service (and its workers) down. */
  main: boolean;
}

interface LiveService {
  name: string;
  description: string;
  state: DeviceService['state'];
  startMode: DeviceService['start_mode'];
  processes: CatalogProcess[];
}

const MiB = 1024 * 1024;
const round1 = (n: number) => Math.round(n * 10) / 10;

export class SimulatedDevice {
  private readonly catalog: Catalog;
  private readonly processes = new Map<number, LiveProcess>();
  private readonly services = new Map<string, LiveService>();
  private nextPid: number;
  readonly bootedAt: number;

  constructor(
    readonly platform: Platform,
    private readonly random: () => number = Math.random,
    now = Date.now(),
  ) {
    this.catalog = CATALOGS[platform];
    this.bootedAt = now - Math.floor((1 + random() * 40) * 86_400_000);
    this.nextPid = platform === 'windows' ? 400 : 20;
    const bootPid = platform === 'windows' ? 4 : 1;
    this.add(this.catalog.init, null, bootPid, 0);
    for (const proc of this.catalog.others) this.add(proc, null);
    for (const s of this.catalog.services) {
      this.services.set(s.name, { name: s.name, description: s.description, state: s.running ? 'running' : 'stopped', startMode: s.startMode, processes: s.processes });
      if (s.running) this.startProcesses(s.name, s.processes, undefined);
    }
    this.agentPid = this.add(this.catalog.agent, null).pid;
  }

  /** The simulated agent's own process: refused by proc_kill like the real agent's. */
  readonly agentPid: number;

  private add(proc: CatalogProcess, service: string | null, pid?: number, startedAt = this.bootedAt + this.random() * 60_000, main = false): LiveProcess {
    const own = pid ?? (this.nextPid += 1 + Math.floor(this.random() * 40));
    const parent = this.platform === 'windows' ? 4 : 1;
    const live: LiveProcess = { ...proc, pid: own, ppid: own === parent ? 0 : parent, startedAt: new Date(startedAt || this.bootedAt).toISOString(), service, main };
    this.processes.set(own, live);
    return live;
  }

  private startProcesses(service: string, processes: readonly CatalogProcess[], at: number | undefined): void {
    processes.forEach((proc, i) => this.add(proc, service, undefined, at, i === 0));
  }

  listProcesses(): { processes: DeviceProcess[] } {
    return {
      processes: [...this.processes.values()].map((p) => ({
        pid: p.pid,
        ppid: p.ppid,
        user: p.user,
        name: p.name,
        command: p.command,
        cpu_percent: round1(Math.max(0, p.cpu * (0.5 + this.random()))),
        rss_bytes: Math.round(p.rssMiB * MiB * (0.95 + this.random() * 0.1)),
        started_at: p.startedAt,
      })),
    };
  }

  kill(pid: number): Record<string, never> {
    if (pid === 1 || (this.platform === 'windows' && pid === 4)) throw new CommandError(`refusing to kill PID ${pid} (the device would go down)`);
    if (pid === this.agentPid) throw new CommandError(`refusing to kill the agent itself (PID ${pid})`);
    const proc = this.processes.get(pid);
    if (!proc) throw new CommandError(`no such process ${pid}`);
    this.processes.delete(pid);
    // A service whose main process died is down, its workers with it: failed under systemd, stopped elsewhere.
    const service = proc.main && proc.service ? this.services.get(proc.service) : undefined;
    if (service) {
      for (const [other, p] of this.processes) if (p.service === service.name) this.processes.delete(other);
      service.state = this.catalog.manager === 'systemd' ? 'failed' : 'stopped';
    }
    return {};
  }

  /** A service's state now; null when the device has no such service. */
  serviceState(name: string): DeviceService['state'] | null {
    return this.services.get(name)?.state ?? null;
  }

  /** The processes running now, the agent's own left out (a process check never counts the agent). */
  *otherProcesses(): Iterable<CatalogProcess> {
    for (const p of this.processes.values()) if (p.pid !== this.agentPid) yield p;
  }

  listServices(): { manager: Catalog['manager']; services: DeviceService[] } {
    return { manager: this.catalog.manager, services: [...this.services.values()].map((s) => this.view(s)) };
  }

  serviceAction(name: string, action: 'start' | 'stop' | 'restart' | 'enable' | 'disable'): { service: DeviceService; output: string } {
    const service = this.services.get(name);
    if (!service) throw new CommandError(`no such service ${name}`);
    if (action === 'enable' || action === 'disable') {
      service.startMode = action === 'enable' ? 'auto' : 'disabled';
      return { service: this.view(service), output: this.enableOutput(name, action) };
    }
    if (action === 'start' && service.startMode === 'disabled' && this.catalog.manager === 'scm') {
      throw new CommandError(`Start-Service : Service '${service.description} (${name})' cannot be started due to the following error: Cannot start service ${name} on computer '.'.`);
    }
    if (action !== 'start') for (const [pid, p] of this.processes) if (p.service === name) this.processes.delete(pid);
    if (action !== 'stop') this.startProcesses(name, service.processes, Date.now());
    service.state = action === 'stop' ? 'stopped' : 'running';
    return { service: this.view(service), output: this.actionOutput(name, action) };
  }

  private view(s: LiveService): DeviceService {
    return { name: s.name, description: s.description, state: s.state, start_mode: s.startMode };
  }

  private actionOutput(name: string, action: string): string {
    if (this.catalog.manager === 'rc.d') return action === 'stop' ? `Stopping ${name}.\nWaiting for PIDS: ${this.nextPid}.` : `Starting ${name}.`;
    return ''; // systemctl and the PowerShell cmdlets say nothing when they succeed
  }

  private enableOutput(name: string, action: string): string {
    if (this.catalog.manager === 'rc.d') return `${name}_enable: ${action === 'enable' ? 'NO -> YES' : 'YES -> NO'}`;
    if (this.catalog.manager === 'systemd') {
      const link = `/etc/systemd/system/multi-user.target.wants/${name}.service`;
      return action === 'enable' ? `Created symlink ${link} → /lib/systemd/system/${name}.service.` : `Removed "${link}".`;
    }
    return '';
  }
}

/** What an untouched device of the platform runs, the agent left out: its catalog, without creating a device. */
function bootProcesses(platform: Platform): CatalogProcess[] {
  const c = CATALOGS[platform];
  return [c.init, ...c.others, ...c.services.filter((s) => s.running).flatMap((s) => s.processes)];
}
const BOOT_PROCESSES = new Map<Platform, CatalogProcess[]>();

/**
 * One agent's simulated device, created on first use: most of 10,000 agents are never asked for a
 * listing, and their checks read the shared catalog as long as nothing changed their device.
 */
export class LazyDevice {
  #device: SimulatedDevice | null = null;

  constructor(
    readonly platform: Platform,
    private readonly random: () => number = Math.random,
  ) {}

  get(): SimulatedDevice {
    return (this.#device ??= new SimulatedDevice(this.platform, this.random));
  }

  serviceState(name: string): DeviceService['state'] | null {
    if (this.#device) return this.#device.serviceState(name);
    const service = CATALOGS[this.platform].services.find((s) => s.name === name);
    return service ? (service.running ? 'running' : 'stopped') : null;
  }

  otherProcesses(): Iterable<CatalogProcess> {
    if (this.#device) return this.#device.otherProcesses();
    let found = BOOT_PROCESSES.get(this.platform);
    if (!found) BOOT_PROCESSES.set(this.platform, (found = bootProcesses(this.platform)));
    return found;
  }
}

/**
 * The device command handlers of one simulated agent: processes and services of its profile, a small
 * read-only file tree, and a tiny line shell. Given to ReferenceAgent as `deviceHandlers`, they replace
 * every real device handler.
 */
export function simulatedDeviceHandlers(platform: Platform, hostname: string, device = new LazyDevice(platform)): Partial<CommandTable> {
  const get = () => device.get();
  return {
    proc_list: async () => get().listProcesses(),
    proc_kill: async ({ pid }) => get().kill(pid),
    svc_list: async () => get().listServices(),
    svc_action: async ({ name, action }) => get().serviceAction(name, action),
    ...simulatedFileHandlers(platform, hostname),
    ...simulatedShellHandlers(platform, hostname),
  };
}
