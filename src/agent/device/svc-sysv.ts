// Services through Debian's init scripts (a Linux device without systemd as PID 1): the scripts of
// /etc/init.d, their state from `service <name> status` (LSB exit codes: 0 running, 3 stopped), their
// start mode from the S/K links of /etc/rc?.d, a change through `service <name> <action>` or
// `update-rc.d <name> enable|disable`, and the description from the script's LSB header.
import { access, constants, open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DeviceService } from '../../modules/agent-hub/device-protocol.js';
import { CommandError } from '../commands/command-error.js';
import { mapLimited, outputOf, runTool } from './run-tool.js';

const INIT_D = '/etc/init.d';
/** Files of /etc/init.d that are not services. */
const NOT_SERVICES = new Set(['README', 'skeleton', 'rc', 'rcS', 'rc.local', 'functions', 'halt', 'reboot', 'single', 'sendsigs', 'killprocs', 'umountfs', 'umountroot', 'umountnfs.sh', 'bootlogs']);
const STATUS_TIMEOUT_MS = 10_000;

async function isScript(name: string): Promise<boolean> {
  if (name.startsWith('.') || NOT_SERVICES.has(name)) return false;
  try {
    const file = path.join(INIT_D, name);
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The LSB header's Short-Description, from the script's first 8 KiB. */
async function description(name: string): Promise<string | null> {
  try {
    const handle = await open(path.join(INIT_D, name), 'r');
    try {
      const { buffer, bytesRead } = await handle.read(Buffer.alloc(8192), 0, 8192, 0);
      const m = /^#\s*Short-Description:\s*(.+)$/m.exec(buffer.subarray(0, bytesRead).toString('utf8'));
      return m?.[1]?.trim() || null;
    } finally {
      await handle.close();
    }
  } catch {
    return null;
  }
}

/** Per script name, its start mode: an S link in rcS or rc2–5 is auto; only K links, disabled; none, manual. */
export function startModes(links: Record<string, readonly string[]>): Map<string, DeviceService['start_mode']> {
  const starts = new Set<string>();
  const linked = new Set<string>();
  for (const [dir, names] of Object.entries(links)) {
    for (const entry of names) {
      const m = /^([SK])\d\d(.+)$/.exec(entry);
      if (!m) continue;
      linked.add(m[2]!);
      if (m[1] === 'S' && /rc[2-5S]\.d$/.test(dir)) starts.add(m[2]!);
    }
  }
  return new Map([...linked].map((name) => [name, starts.has(name) ? 'auto' : 'disabled']));
}

async function rcLinks(): Promise<Record<string, string[]>> {
  const dirs = ['rc0.d', 'rc1.d', 'rc2.d', 'rc3.d', 'rc4.d', 'rc5.d', 'rc6.d', 'rcS.d'];
  const entries = await Promise.all(dirs.map((d) => readdir(path.join('/etc', d)).catch(() => [] as string[])));
  return Object.fromEntries(dirs.map((d, i) => [d, entries[i]!]));
}

/**
 * LSB status codes: 0 running, 3 stopped, 1 and 2 dead with a pid or lock file left (failed), else
 * unknown. A script without a status action prints its usage and exits 1: unknown, not failed.
 */
export function stateOfStatus(code: number | null, timedOut: boolean, output: string): DeviceService['state'] {
  if (timedOut) return 'unknown';
  if (code === 0) return 'running';
  if (code === 3) return 'stopped';
  if ((code === 1 || code === 2) && !/usage:/i.test(output)) return 'failed';
  return 'unknown';
}

async function state(name: string): Promise<DeviceService['state']> {
  const result = await runTool('service', [name, 'status'], { timeoutMs: STATUS_TIMEOUT_MS });
  return stateOfStatus(result.code, result.timedOut, outputOf(result));
}

export async function sysvServices(): Promise<DeviceService[]> {
  const names = (await readdir(INIT_D).catch(() => [] as string[])).sort();
  const scripts = (await mapLimited(names, 16, async (n) => ((await isScript(n)) ? n : null))).filter((n): n is string => n !== null);
  const modes = startModes(await rcLinks());
  // Status scripts may be slow (rabbitmq's takes seconds): a few at a time, each with its own limit.
  return mapLimited(scripts, 4, async (name) => ({ name, description: await description(name), state: await state(name), start_mode: modes.get(name) ?? 'manual' }));
}

export async function sysvService(name: string): Promise<DeviceService> {
  if (!(await isScript(name))) throw new CommandError(`no such service ${name}`);
  const [desc, st, links] = await Promise.all([description(name), state(name), rcLinks()]);
  return { name, description: desc, state: st, start_mode: startModes(links).get(name) ?? 'manual' };
}

export async function sysvAction(name: string, action: string): Promise<string> {
  if (!(await isScript(name))) throw new CommandError(`no such service ${name}`);
  const [file, args] = action === 'enable' || action === 'disable' ? ['update-rc.d', [name, action]] : ['service', [name, action]];
  const result = await runTool(file, args, { timeoutMs: 55_000 });
  if (result.code !== 0) throw new CommandError(`${file} ${args.join(' ')} failed (exit ${result.code}): ${outputOf(result)}`);
  return outputOf(result);
}
