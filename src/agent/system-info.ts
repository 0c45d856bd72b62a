// Collects the system data a heartbeat carries, from the machine the agent runs on, on the paths of
// contract §2 (cpu, memory, disks, network.interfaces, uptime). Linux reads /proc and statfs; other
// platforms fall back to what the os module offers; Windows adds its software inventory. One collector
// per agent: CPU usage is a delta between two readings (cpu-usage.ts).
import { readFileSync } from 'node:fs';
import { readFile, statfs } from 'node:fs/promises';
import os from 'node:os';
import { CpuMeter } from './cpu-usage.js';
import { readWindowsSoftware, type SoftwareEntry } from './software-inventory.js';

/** Programs change rarely, and reading the registry starts two processes: once per 10 minutes is enough. */
const SOFTWARE_REFRESH_MS = 10 * 60_000;

export interface DiskInfo {
  mount: string;
  device: string;
  fstype: string;
  total_bytes: number;
  used_bytes: number;
  /** What unprivileged users may still write: the free space less the blocks reserved for root. */
  available_bytes: number;
  /** As `df` shows it: used / (used + available), rounded up to a whole percent. */
  used_percent: number;
}

export interface InterfaceInfo {
  name: string;
  status?: string;
  ipv4: string[];
  rx_bytes?: number;
  tx_bytes?: number;
}

export interface SystemInfo {
  hostname: string;
  collected_at: string;
  /** usage_percent is absent only when the CPU counters did not move between two readings. */
  cpu: { usage_percent?: number; cores: number; model: string; load_average: number[] };
  memory: { total_bytes: number; used_bytes: number; used_percent: number; swap_total_bytes?: number; swap_used_bytes?: number };
  uptime_seconds: number;
  os: { name: string; version: string; kernel: string; arch: string };
  disks: DiskInfo[];
  network: { interfaces: InterfaceInfo[] };
  /** Windows only; absent when the registry could not be read (the server keeps its list then). */
  software?: SoftwareEntry[];
}

/** Filesystems that hold no user data (kernel interfaces, memory-backed, read-only images). */
const PSEUDO_FS = new Set(
  'proc sysfs devtmpfs devpts tmpfs ramfs cgroup cgroup2 mqueue securityfs debugfs tracefs pstore bpf configfs fusectl hugetlbfs autofs binfmt_misc nsfs rpc_pipefs efivarfs selinuxfs squashfs fuse.lxcfs fuse.portal fuse.gvfsd-fuse shm sunrpc nfsd'.split(' '),
);

const round1 = (n: number) => Math.round(n * 10) / 10;
const percent = (part: number, whole: number) => (whole > 0 ? round1((part / whole) * 100) : 0);

export class SystemInfoCollector {
  private readonly cpu = new CpuMeter();
  private readonly linux = process.platform === 'linux';
  private readonly windows = process.platform === 'win32';
  private softwareRead: { at: number; entries: SoftwareEntry[] } | null = null;

  /** Takes the first CPU reading, so that the first collect() waits as little as possible. */
  prime(): Promise<void> {
    return this.cpu.prime();
  }

  /** `signal` cuts short the wait for the first CPU window (the agent stopping). */
  async collect(signal?: AbortSignal): Promise<SystemInfo> {
    const [usage, memory, disks, interfaces, osInfo, software] = await Promise.all([
      this.cpu.usage(signal),
      this.memory(),
      this.disks(),
      this.interfaces(),
      this.osInfo(),
      this.windows ? this.software() : undefined,
    ]);
    const cpus = os.cpus();
    return {
      hostname: os.hostname(),
      collected_at: new Date().toISOString(),
      cpu: {
        ...(usage !== undefined ? { usage_percent: usage } : {}),
        cores: cpus.length,
        model: cpus[0]?.model.trim() ?? 'unknown',
        load_average: os.loadavg().map((l) => Math.round(l * 100) / 100),
      },
      memory,
      uptime_seconds: Math.floor(os.uptime()),
      os: osInfo,
      disks,
      network: { interfaces },
      ...(software ? { software } : {}),
    };
  }

  /** The registry's programs, read again after SOFTWARE_REFRESH_MS; a failed read keeps the last list. */
  private async software(): Promise<SoftwareEntry[] | undefined> {
    const now = Date.now();
    if (this.softwareRead && now - this.softwareRead.at < SOFTWARE_REFRESH_MS) return this.softwareRead.entries;
    try {
      this.softwareRead = { at: now, entries: await readWindowsSoftware() };
    } catch {
      if (this.softwareRead) this.softwareRead.at = now; // try again in a while, not every heartbeat
    }
    return this.softwareRead?.entries;
  }

  private memory(): Promise<SystemInfo['memory']> {
    return readMemory();
  }

  private async disks(): Promise<DiskInfo[]> {
    const mounts = this.linux ? await linuxMounts() : [{ device: 'root', mount: process.platform === 'win32' ? 'C:\\' : '/', fstype: 'unknown' }];
    const disks = await Promise.all(
      mounts.map(async (m) => {
        const s = await statfs(m.mount).catch(() => null);
        if (!s || s.blocks === 0) return null;
        const used = s.blocks - s.bfree;
        return {
          mount: m.mount,
          device: m.device,
          fstype: m.fstype,
          total_bytes: s.blocks * s.bsize,
          used_bytes: used * s.bsize,
          available_bytes: s.bavail * s.bsize,
          used_percent: dfUsedPercent(used, s.bavail),
        };
      }),
    );
    return disks.filter((d): d is DiskInfo => d !== null);
  }

  private async interfaces(): Promise<InterfaceInfo[]> {
    const addresses = os.networkInterfaces();
    const ipv4 = (name: string) => (addresses[name] ?? []).filter((a) => a.family === 'IPv4').map((a) => a.cidr ?? a.address);
    const counters = this.linux ? await procNetDev().catch(() => null) : null;
    if (!counters) {
      return Object.keys(addresses)
        .filter((name) => !(addresses[name] ?? []).every((a) => a.internal))
        .map((name) => ({ name, ipv4: ipv4(name) }));
    }
    return counters
      .filter((c) => c.name !== 'lo')
      .map((c) => ({ name: c.name, status: operState(c.name), ipv4: ipv4(c.name), rx_bytes: c.rx, tx_bytes: c.tx }));
  }

  private async osInfo(): Promise<SystemInfo['os']> {
    let name = os.type();
    let version = os.release();
    if (this.linux) {
      const release = await readFile('/etc/os-release', 'utf8').catch(() => '');
      const field = (key: string) => new RegExp(`^${key}="?([^"\\n]*)"?`, 'm').exec(release)?.[1];
      name = field('NAME') ?? name;
      version = field('VERSION_ID') ?? version;
    }
    return { name, version, kernel: os.release(), arch: os.machine() };
  }
}

/** Memory in use: /proc/meminfo on Linux (what MemAvailable says cannot be had back), os elsewhere. */
export async function readMemory(): Promise<SystemInfo['memory']> {
  if (process.platform === 'linux') {
    const info = await readFile('/proc/meminfo', 'utf8').catch(() => null);
    if (info) {
      const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(info)?.[1] ?? NaN) * 1024;
      const total = kb('MemTotal');
      const available = kb('MemAvailable');
      if (Number.isFinite(total) && Number.isFinite(available)) {
        const swapTotal = kb('SwapTotal');
        const swapFree = kb('SwapFree');
        return {
          total_bytes: total,
          used_bytes: total - available,
          used_percent: percent(total - available, total),
          ...(Number.isFinite(swapTotal) && Number.isFinite(swapFree) ? { swap_total_bytes: swapTotal, swap_used_bytes: swapTotal - swapFree } : {}),
        };
      }
    }
  }
  const total = os.totalmem();
  const used = total - os.freemem();
  return { total_bytes: total, used_bytes: used, used_percent: percent(used, total) };
}

/**
 * `df`'s Use%: used / (used + available), rounded up, in exact integer arithmetic as df computes it. The
 * blocks reserved for root (5 % of an ext4 file system by default, often more) count as neither: a disk
 * is full when ordinary processes can no longer write, and an alert on used / total would come late.
 */
export function dfUsedPercent(usedBlocks: number, availableBlocks: number): number {
  const used = BigInt(usedBlocks);
  const whole = used + BigInt(availableBlocks);
  return whole > 0n ? Number((used * 100n + whole - 1n) / whole) : 0;
}

/** Real filesystems from /proc/mounts, one entry per device (the shortest mount path wins). */
async function linuxMounts(): Promise<{ device: string; mount: string; fstype: string }[]> {
  const text = await readFile('/proc/mounts', 'utf8').catch(() => '');
  const byDevice = new Map<string, { device: string; mount: string; fstype: string }>();
  for (const line of text.split('\n')) {
    const [device, rawMount, fstype] = line.split(' ');
    if (!device || !rawMount || !fstype || PSEUDO_FS.has(fstype)) continue;
    // /proc/mounts escapes spaces and similar as octal (\040).
    const mount = rawMount.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
    const key = `${device} ${fstype}`;
    const seen = byDevice.get(key);
    if (!seen || mount.length < seen.mount.length) byDevice.set(key, { device, mount, fstype });
  }
  return [...byDevice.values()];
}

async function procNetDev(): Promise<{ name: string; rx: number; tx: number }[]> {
  const lines = (await readFile('/proc/net/dev', 'utf8')).split('\n').slice(2);
  return lines.flatMap((line) => {
    const [name, rest] = line.split(':');
    if (!name || rest === undefined) return [];
    const v = rest.trim().split(/\s+/).map(Number);
    return [{ name: name.trim(), rx: v[0] ?? 0, tx: v[8] ?? 0 }];
  });
}

function operState(name: string): string {
  try {
    return readFileSync(`/sys/class/net/${name}/operstate`, 'utf8').trim();
  } catch {
    return 'unknown';
  }
}
