// The checks of one simulated agent of the fleet (issue 61): the runner its CheckScheduler calls instead
// of the real one (agent/checks/run-check.ts), so nothing ever runs, connects or resolves on the machine
// the simulator runs on. The device's own checks read the simulated device: a service check its
// service's state (a stopped service is CRITICAL at the next run), a process check its processes, disk,
// CPU and memory the figures the heartbeats report. The checks of the network and plugins (http, tcp,
// ping, dns, script) answer OK with plausible perfdata, and now and then fall into a spell of WARNING or
// CRITICAL for a few runs, so a fleet's failing view lives. All chance comes from `random`, so a seeded
// source gives the same results.
import type { Platform } from '../agent/device-state.js';
import { CRITICAL, OK, UNKNOWN, WARNING, type CheckOutcome } from '../agent/checks/nagios-output.js';
import { checkResult } from '../agent/checks/run-check.js';
import { levelAbove, outcome, perf } from '../agent/checks/thresholds.js';
import type { AgentCheck, CheckResult, CheckStateCode } from '../modules/checks/check-protocol.js';
import type { LazyDevice } from './simulated-device.js';
import type { SimulatedSystem } from './simulated-system.js';
import { networkOutcome, type Spell } from './simulated-network-checks.js';

export interface SimulatedChecksOptions {
  platform: Platform;
  device: LazyDevice;
  system: SimulatedSystem;
  random?: () => number;
  /** Chance per run that a healthy network or plugin check starts failing; default 1 %. */
  failureChance?: number;
}

/** A spell of failure lasts this many runs at least, and up to twice as many. */
const SPELL_RUNS = 2;

type Params = Record<string, unknown>;
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const gib = (bytes: number) => (bytes / 1024 ** 3).toFixed(1);

export class SimulatedChecks {
  /** Checks failing now, and for how many more runs: only those, so a healthy fleet holds nothing here. */
  readonly #spells = new Map<string, Spell>();
  readonly #random: () => number;

  constructor(private readonly options: SimulatedChecksOptions) {
    this.#random = options.random ?? Math.random;
  }

  /** One run of `check`, as CheckScheduler's `run`: resolves at once, its duration made up. */
  run = async (check: AgentCheck): Promise<CheckResult> => {
    const ranAt = new Date();
    const { outcome: result, ms } = this.#outcome(check);
    return checkResult(check, result, ranAt, ms);
  };

  #outcome(check: AgentCheck): { outcome: CheckOutcome; ms: number } {
    const p = check.params as Params;
    switch (check.kind) {
      case 'service':
        return { outcome: this.#service(str(p.name)), ms: 15 + this.#random() * 30 };
      case 'process':
        return { outcome: this.#process(p), ms: 5 + this.#random() * 20 };
      case 'disk':
        return { outcome: this.#disk(p), ms: 1 };
      case 'cpu':
        return { outcome: this.#cpu(p), ms: 1000 };
      case 'memory':
        return { outcome: this.#memory(p), ms: 1 };
      default: {
        const spell = this.#spell(check);
        return networkOutcome(check.kind, p, spell, this.#random);
      }
    }
  }

  /** The failure spell a network or plugin check is in for this run, if any (a new one starts by chance). */
  #spell(check: AgentCheck): Spell | undefined {
    let spell = this.#spells.get(check.id);
    if (!spell && this.#random() < (this.options.failureChance ?? 0.01)) {
      const state: CheckStateCode = this.#random() < 0.6 ? WARNING : CRITICAL;
      spell = { state, runsLeft: SPELL_RUNS + Math.floor(this.#random() * (SPELL_RUNS + 1)) };
      this.#spells.set(check.id, spell);
    }
    if (!spell) return undefined;
    spell.runsLeft -= 1;
    if (spell.runsLeft <= 0) this.#spells.delete(check.id);
    return spell;
  }

  #service(name: string): CheckOutcome {
    const state = this.options.device.serviceState(name);
    if (state === null) return outcome('SERVICE', CRITICAL, `no such service ${name}`);
    return outcome('SERVICE', state === 'running' ? OK : CRITICAL, `${name} is ${state}`);
  }

  #process(p: Params): CheckOutcome {
    const pattern = str(p.pattern);
    const byCommand = p.match === 'command';
    let count = 0;
    for (const proc of this.options.device.otherProcesses()) if ((byCommand ? proc.command : proc.name).includes(pattern)) count++;
    const min = num(p.min) ?? 1;
    const max = num(p.max);
    const bad = count < min || (max !== undefined && count > max);
    const range = max !== undefined ? `${min}..${max}` : `at least ${min}`;
    const text = `${count} process${count === 1 ? '' : 'es'} with ${byCommand ? 'command' : 'name'} matching ${JSON.stringify(pattern)} (expected ${range})`;
    return outcome('PROCS', bad ? CRITICAL : OK, text, [perf('procs', count, '', { min: 0 })]);
  }

  #disk(p: Params): CheckOutcome {
    const mount = str(p.mount);
    const disks = this.options.system.readings().disks;
    // Windows names its drive C: or C:\, in any case.
    const key = (m: string) => (this.options.platform === 'windows' ? m.replace(/\\$/, '').toUpperCase() : m);
    const disk = disks.find((d) => key(d.mount) === key(mount));
    if (!disk || disk.totalBytes <= 0) return outcome('DISK', UNKNOWN, `${mount}: No such file or directory`);
    const usedPercent = Math.round((disk.usedBytes / disk.totalBytes) * 1000) / 10;
    const warn = num(p.warn_percent);
    const crit = num(p.crit_percent);
    return outcome('DISK', levelAbove(usedPercent, warn, crit), `${mount} ${usedPercent}% used (${gib(disk.usedBytes)} of ${gib(disk.totalBytes)} GiB)`, [
      perf(mount, usedPercent, '%', { warn, crit, min: 0, max: 100 }),
      perf('used', disk.usedBytes, 'B', { min: 0, max: disk.totalBytes }),
    ]);
  }

  #cpu(p: Params): CheckOutcome {
    const usage = this.options.system.readings().cpuPercent;
    const warn = num(p.warn_percent);
    const crit = num(p.crit_percent);
    return outcome('CPU', levelAbove(usage, warn, crit), `${usage}% used`, [perf('cpu', usage, '%', { warn, crit, min: 0, max: 100 })]);
  }

  #memory(p: Params): CheckOutcome {
    const { memoryPercent, memoryTotalBytes } = this.options.system.readings();
    const used = Math.round((memoryTotalBytes * memoryPercent) / 100);
    const warn = num(p.warn_percent);
    const crit = num(p.crit_percent);
    return outcome('MEMORY', levelAbove(memoryPercent, warn, crit), `${memoryPercent}% used (${gib(used)} of ${gib(memoryTotalBytes)} GiB)`, [
      perf('memory', memoryPercent, '%', { warn, crit, min: 0, max: 100 }),
      perf('used', used, 'B', { min: 0, max: memoryTotalBytes }),
    ]);
  }
}
