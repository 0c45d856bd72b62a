// The process list of a Linux device, read from /proc: pid, parent, owner (uid through /etc/passwd),
// name (comm), command line (cmdline, NULs as spaces), resident memory, start time (boot time plus the
// start tick) and CPU % measured over a short sample: two reads of every /proc/<pid>/stat and of
// /proc/stat SAMPLE_MS apart. CPU % is per core, as top shows it (a process busy on two cores is 200).
import { readdir, readFile, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DeviceProcess } from '../../modules/agent-hub/device-protocol.js';
import { runTool } from './run-tool.js';

export const SAMPLE_MS = 250;

interface StatLine {
  pid: number;
  ppid: number;
  name: string;
  /** utime + stime, in clock ticks. */
  ticks: number;
  startTicks: number;
  rssPages: number;
}

/** Parses /proc/<pid>/stat; the name is between the first '(' and the last ')' (it may hold both). */
export function parseStat(pid: number, text: string): StatLine | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  // Fields after the name, numbered as in proc(5) from field 3 (state) on.
  const f = text.slice(close + 2).split(' ');
  const field = (n: number) => Number(f[n - 3]);
  return { pid, ppid: field(4), name: text.slice(open + 1, close), ticks: field(14) + field(15), startTicks: field(22), rssPages: field(24) };
}

/** Sum of all CPUs' ticks and the number of CPUs, from /proc/stat; and the boot time (s since epoch). */
export function parseProcStat(text: string): { totalTicks: number; cpus: number; bootTime: number } {
  let totalTicks = 0;
  let cpus = 0;
  let bootTime = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('cpu ')) totalTicks = line.trim().split(/\s+/).slice(1, 9).reduce((sum, v) => sum + Number(v), 0);
    else if (/^cpu\d/.test(line)) cpus++;
    else if (line.startsWith('btime ')) bootTime = Number(line.slice(6));
  }
  return { totalTicks, cpus: Math.max(1, cpus), bootTime };
}

/** uid → user name, from /etc/passwd. */
export function parsePasswd(text: string): Map<number, string> {
  const users = new Map<number, string>();
  for (const line of text.split('\n')) {
    const [name, , uid] = line.split(':');
    if (name && uid !== undefined && /^\d+$/.test(uid)) users.set(Number(uid), name);
  }
  return users;
}

let sysconf: Promise<{ tick: number; page: number }> | null = null;

/** Clock ticks per second and the page size (getconf; Linux's usual values if it is missing). */
function systemConstants(): Promise<{ tick: number; page: number }> {
  const value = async (name: string, fallback: number) => {
    try {
      const n = Number((await runTool('getconf', [name], { timeoutMs: 5000 })).stdout.trim());
      return Number.isFinite(n) && n > 0 ? n : fallback;
    } catch {
      return fallback;
    }
  };
  sysconf ??= Promise.all([value('CLK_TCK', 100), value('PAGESIZE', 4096)]).then(([tick, page]) => ({ tick, page }));
  return sysconf;
}

async function pids(): Promise<number[]> {
  return (await readdir('/proc')).filter((n) => /^\d+$/.test(n)).map(Number);
}

/** Every process's stat line now (processes that end meanwhile are left out). */
async function readStats(list: readonly number[]): Promise<Map<number, StatLine>> {
  const stats = new Map<number, StatLine>();
  await Promise.all(
    list.map(async (pid) => {
      const parsed = await readFile(`/proc/${pid}/stat`, 'utf8').then((t) => parseStat(pid, t), () => null);
      if (parsed) stats.set(pid, parsed);
    }),
  );
  return stats;
}

export async function linuxProcesses(): Promise<DeviceProcess[]> {
  const [{ tick, page }, passwd] = await Promise.all([systemConstants(), readFile('/etc/passwd', 'utf8').catch(() => '')]);
  const users = parsePasswd(passwd);
  const before = parseProcStat(await readFile('/proc/stat', 'utf8'));
  const first = await readStats(await pids());
  await sleep(SAMPLE_MS);
  const after = parseProcStat(await readFile('/proc/stat', 'utf8'));
  const second = await readStats(await pids());
  // Ticks of one CPU in the sample (the total counts every CPU).
  const elapsed = (after.totalTicks - before.totalTicks) / after.cpus;
  const processes = await Promise.all(
    [...second.values()].map(async (s): Promise<DeviceProcess | null> => {
      const [cmdline, owner] = await Promise.all([readFile(`/proc/${s.pid}/cmdline`).catch(() => null), stat(`/proc/${s.pid}`).catch(() => null)]);
      if (!owner) return null; // ended between the reads
      const previous = first.get(s.pid);
      const cpu = previous && elapsed > 0 ? Math.round(((s.ticks - previous.ticks) / elapsed) * 1000) / 10 : null;
      const command = cmdline ? cmdline.toString('utf8').replace(/\0+$/, '').replace(/\0/g, ' ') : '';
      return {
        pid: s.pid,
        ppid: s.ppid,
        user: users.get(owner.uid) ?? String(owner.uid),
        name: s.name,
        // Kernel threads have no command line: shown as ps does, their name in brackets.
        command: command || `[${s.name}]`,
        cpu_percent: cpu === null ? null : Math.max(0, cpu),
        rss_bytes: s.rssPages * page,
        started_at: after.bootTime > 0 ? new Date((after.bootTime + s.startTicks / tick) * 1000).toISOString() : null,
      };
    }),
  );
  return processes.filter((p): p is DeviceProcess => p !== null).sort((a, b) => a.pid - b.pid);
}
