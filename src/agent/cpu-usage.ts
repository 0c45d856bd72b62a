// CPU usage as the busy share of the time between two readings of the kernel's counters. The counters
// run since boot, so one reading alone only gives the average since boot, which says nothing about the
// load of now (an agent started on a machine that idled for a week would report its week). The meter
// therefore never answers from one reading: it takes a first one as early as it can (the agent primes it
// at start) and answers only over a window of at least MIN_WINDOW_MS, waiting out the rest of that window
// before its first answer. Later answers cover the time since the previous one; a call sooner than
// MIN_WINDOW_MS after it gets the previous answer again rather than a figure from a few clock ticks.
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';

/** /proc/stat counts in ticks of 10 ms per core: one second on two cores is 200 ticks, 0.5 % steps. */
export const MIN_WINDOW_MS = 1000;

export interface CpuTimes {
  busy: number;
  total: number;
}

export class CpuMeter {
  #last: { times: CpuTimes; at: number } | null = null;
  #priming: Promise<void> | null = null;
  #percent: number | undefined;

  constructor(private readonly read: () => Promise<CpuTimes> = readCpuTimes) {}

  /** Takes the first reading (once); the first usage() waits until MIN_WINDOW_MS after it. */
  prime(): Promise<void> {
    this.#priming ??= this.read().then((times) => void (this.#last = { times, at: performance.now() }));
    return this.#priming;
  }

  /**
   * The busy share in percent (one decimal) since the previous answer, or since prime() for the first;
   * undefined only when the counters did not move at all. `signal` cuts the first wait short.
   */
  async usage(signal?: AbortSignal): Promise<number | undefined> {
    await this.prime();
    const last = this.#last!;
    const waited = performance.now() - last.at;
    if (waited < MIN_WINDOW_MS) {
      if (this.#percent !== undefined) return this.#percent;
      await delay(MIN_WINDOW_MS - waited, undefined, signal ? { signal } : {}).catch(() => undefined);
    }
    const now = { times: await this.read(), at: performance.now() };
    if (now.times.total <= last.times.total) return this.#percent; // no tick counted: nothing to say
    this.#last = now;
    this.#percent = Math.round(((now.times.busy - last.times.busy) / (now.times.total - last.times.total)) * 1000) / 10;
    return this.#percent;
  }
}

/** The machine's CPU counters: /proc/stat on Linux (also counting iowait as idle), os.cpus() elsewhere. */
export async function readCpuTimes(): Promise<CpuTimes> {
  return process.platform === 'linux' ? procStatTimes().catch(() => osCpuTimes()) : osCpuTimes();
}

async function procStatTimes(): Promise<CpuTimes> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n', 1)[0] ?? '';
  // cpu user nice system idle iowait irq softirq steal (guest time is already counted in user)
  const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: total - idle, total };
}

function osCpuTimes(): CpuTimes {
  let busy = 0;
  let total = 0;
  for (const { times } of os.cpus()) {
    const sum = times.user + times.nice + times.sys + times.idle + times.irq;
    total += sum;
    busy += sum - times.idle;
  }
  return { busy, total };
}
