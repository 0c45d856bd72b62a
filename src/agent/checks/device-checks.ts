// The built-in checks of the device itself: service, process, disk, cpu and memory. They read what the
// services and processes views and the heartbeat's system data read (device/services.ts,
// device/processes.ts, system-info.ts), so a check and the console never disagree about the device.
import { statfs } from 'node:fs/promises';
import type { z } from 'zod';
import type { checkParams } from '../../modules/checks/check-protocol.js';
import { CpuMeter } from '../cpu-usage.js';
import { procList } from '../device/processes.js';
import { svcOne } from '../device/services.js';
import { dfUsedPercent, readMemory } from '../system-info.js';
import { CRITICAL, OK, UNKNOWN, type CheckOutcome } from './nagios-output.js';
import type { CheckContext } from './network-checks.js';
import { levelAbove, outcome, perf } from './thresholds.js';

type Params<K extends keyof typeof checkParams> = z.infer<(typeof checkParams)[K]>;

export async function serviceCheck(p: Params<'service'>): Promise<CheckOutcome> {
  try {
    const { service } = await svcOne(p.name);
    if (service.state === 'running') return outcome('SERVICE', OK, `${service.name} is running`);
    return outcome('SERVICE', CRITICAL, `${service.name} is ${service.state}`);
  } catch (err) {
    // No such service is the check's finding; a service manager that cannot be asked is not.
    const message = (err as Error).message;
    return outcome('SERVICE', /not found|no such|does not exist|not-found|unknown service/i.test(message) ? CRITICAL : UNKNOWN, message.slice(0, 1000));
  }
}

export async function processCheck(p: Params<'process'>): Promise<CheckOutcome> {
  let processes;
  try {
    ({ processes } = await procList());
  } catch (err) {
    return outcome('PROCS', UNKNOWN, `cannot list processes: ${(err as Error).message}`);
  }
  const own = process.pid;
  // The agent's own process (whose command line may hold the pattern) does not count.
  const count = processes.filter((proc) => proc.pid !== own && (p.match === 'command' ? proc.command : proc.name).includes(p.pattern)).length;
  const low = count < p.min;
  const high = p.max !== undefined && count > p.max;
  const range = p.max !== undefined ? `${p.min}..${p.max}` : `at least ${p.min}`;
  const what = `${count} process${count === 1 ? '' : 'es'} with ${p.match} matching ${JSON.stringify(p.pattern)} (expected ${range})`;
  return outcome('PROCS', low || high ? CRITICAL : OK, what, [perf('procs', count, '', { min: 0 })]);
}

export async function diskCheck(p: Params<'disk'>): Promise<CheckOutcome> {
  // "C:" alone is the drive's current directory on Windows; its root is what is meant.
  const mount = /^[A-Za-z]:$/.test(p.mount) ? `${p.mount}\\` : p.mount;
  const s = await statfs(mount).catch((err: Error) => err);
  if (s instanceof Error) return outcome('DISK', UNKNOWN, `${p.mount}: ${s.message}`);
  if (s.blocks === 0) return outcome('DISK', UNKNOWN, `${p.mount}: the file system reports no blocks`);
  // As df: used / (used + available), so the blocks reserved for root count as neither.
  const usedBlocks = s.blocks - s.bfree;
  const usedPercent = dfUsedPercent(usedBlocks, s.bavail);
  const state = levelAbove(usedPercent, p.warn_percent, p.crit_percent);
  const usedBytes = usedBlocks * s.bsize;
  const whole = (usedBlocks + s.bavail) * s.bsize;
  const text = `${p.mount} ${usedPercent}% used (${gib(usedBytes)} of ${gib(whole)} GiB)`;
  return outcome('DISK', state, text, [
    perf(p.mount, usedPercent, '%', { warn: p.warn_percent, crit: p.crit_percent, min: 0, max: 100 }),
    perf('used', usedBytes, 'B', { min: 0, max: whole }),
  ]);
}

const gib = (bytes: number) => (bytes / 1024 ** 3).toFixed(1);

/** Usage over a sample of its own (about one second): the load of now, not the average since boot. */
export async function cpuCheck(p: Params<'cpu'>, ctx: CheckContext): Promise<CheckOutcome> {
  const meter = new CpuMeter();
  await meter.prime();
  const usage = await meter.usage(ctx.signal);
  if (ctx.signal.aborted) return outcome('CPU', UNKNOWN, 'the sample was cut short');
  if (usage === undefined) return outcome('CPU', UNKNOWN, 'the CPU counters did not move during the sample');
  const state = levelAbove(usage, p.warn_percent, p.crit_percent);
  return outcome('CPU', state, `${usage}% used`, [perf('cpu', usage, '%', { warn: p.warn_percent, crit: p.crit_percent, min: 0, max: 100 })]);
}

export async function memoryCheck(p: Params<'memory'>): Promise<CheckOutcome> {
  const memory = await readMemory();
  const state = levelAbove(memory.used_percent, p.warn_percent, p.crit_percent);
  const text = `${memory.used_percent}% used (${gib(memory.used_bytes)} of ${gib(memory.total_bytes)} GiB)`;
  return outcome('MEMORY', state, text, [
    perf('memory', memory.used_percent, '%', { warn: p.warn_percent, crit: p.crit_percent, min: 0, max: 100 }),
    perf('used', memory.used_bytes, 'B', { min: 0, max: memory.total_bytes }),
  ]);
}
