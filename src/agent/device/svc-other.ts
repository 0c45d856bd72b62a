// Services on FreeBSD (rc.d through `service`, `sysrc` for the start mode) and Windows (the service
// control manager through PowerShell). A service name reaches PowerShell through the environment, never
// inside the command text.
import { readFile } from 'node:fs/promises';
import type { DeviceService } from '../../modules/agent-hub/device-protocol.js';
import { CommandError } from '../commands/command-error.js';
import { jsonItems, powershell } from './proc-other.js';
import { mapLimited, outputOf, runTool } from './run-tool.js';

// ---- FreeBSD ----

const RC_DIRS = ['/etc/rc.d', '/usr/local/etc/rc.d'];

async function rcDescription(name: string): Promise<string | null> {
  for (const dir of RC_DIRS) {
    const text = await readFile(`${dir}/${name}`, 'utf8').catch(() => null);
    const m = text ? /^desc="([^"]*)"/m.exec(text) : null;
    if (m) return m[1] || null;
  }
  return null;
}

async function rcState(name: string): Promise<DeviceService['state']> {
  const result = await runTool('service', [name, 'onestatus'], { timeoutMs: 10_000 });
  if (result.timedOut) return 'unknown';
  return result.code === 0 ? 'running' : /not running/i.test(outputOf(result)) ? 'stopped' : 'unknown';
}

async function rcEnabled(): Promise<Set<string>> {
  const result = await runTool('service', ['-e']);
  return new Set(result.stdout.split('\n').filter(Boolean).map((p) => p.trim().split('/').pop()!));
}

export async function rcServices(): Promise<DeviceService[]> {
  const all = await runTool('service', ['-l']);
  if (all.code !== 0) throw new CommandError(`service -l failed: ${outputOf(all)}`);
  const enabled = await rcEnabled();
  const names = [...new Set(all.stdout.split('\n').map((l) => l.trim()).filter((l) => /^[\w.@+-]+$/.test(l)))].sort();
  return mapLimited(names, 4, async (name) => ({ name, description: await rcDescription(name), state: await rcState(name), start_mode: enabled.has(name) ? 'auto' : 'manual' }));
}

export async function rcService(name: string): Promise<DeviceService> {
  const [all, enabled] = await Promise.all([runTool('service', ['-l']), rcEnabled()]);
  if (!all.stdout.split('\n').some((l) => l.trim() === name)) throw new CommandError(`no such service ${name}`);
  return { name, description: await rcDescription(name), state: await rcState(name), start_mode: enabled.has(name) ? 'auto' : 'manual' };
}

export async function rcAction(name: string, action: string): Promise<string> {
  await rcService(name);
  // one*: acts whether or not rc.conf enables the service; enable/disable edit rc.conf through sysrc.
  const [file, args] =
    action === 'enable' || action === 'disable' ? ['sysrc', [`${name.replace(/[^A-Za-z0-9_]/g, '_')}_enable=${action === 'enable' ? 'YES' : 'NO'}`]] : ['service', [name, `one${action}`]];
  const result = await runTool(file, args, { timeoutMs: 55_000 });
  if (result.code !== 0) throw new CommandError(`${file} ${args.join(' ')} failed (exit ${result.code}): ${outputOf(result)}`);
  return outputOf(result);
}

// ---- Windows ----

/** ServiceControllerStatus and ServiceStartMode, as numbers (ConvertTo-Json) or names. */
const WIN_STATES: Record<string, DeviceService['state']> = { '1': 'stopped', '2': 'starting', '3': 'stopping', '4': 'running', '5': 'starting', '6': 'stopping', '7': 'stopped', Stopped: 'stopped', StartPending: 'starting', StopPending: 'stopping', Running: 'running', ContinuePending: 'starting', PausePending: 'stopping', Paused: 'stopped' };
const WIN_MODES: Record<string, DeviceService['start_mode']> = { '0': 'auto', '1': 'auto', '2': 'auto', '3': 'manual', '4': 'disabled', Boot: 'auto', System: 'auto', Automatic: 'auto', Manual: 'manual', Disabled: 'disabled' };

export function parseWindowsServices(text: string): DeviceService[] {
  return jsonItems(text).map((s) => ({
    name: String(s.Name ?? ''),
    description: typeof s.DisplayName === 'string' ? s.DisplayName : null,
    state: WIN_STATES[String(s.Status)] ?? 'unknown',
    start_mode: WIN_MODES[String(s.StartType)] ?? 'unknown',
  }));
}

const SELECT = 'Select-Object Name,DisplayName,Status,StartType | ConvertTo-Json -Compress';

export async function scmServices(): Promise<DeviceService[]> {
  const result = await powershell(`Get-Service | ${SELECT}`);
  if (result.code !== 0) throw new CommandError(`Get-Service failed: ${outputOf(result)}`);
  return parseWindowsServices(result.stdout).sort((a, b) => a.name.localeCompare(b.name));
}

export async function scmService(name: string): Promise<DeviceService> {
  const result = await powershell(`Get-Service -Name $env:RMM_SERVICE -ErrorAction Stop | ${SELECT}`, { RMM_SERVICE: name });
  const found = result.code === 0 ? parseWindowsServices(result.stdout)[0] : undefined;
  if (!found) throw new CommandError(`no such service ${name}`);
  return found;
}

const WIN_ACTIONS: Record<string, string> = {
  start: 'Start-Service -Name $env:RMM_SERVICE -ErrorAction Stop',
  stop: 'Stop-Service -Name $env:RMM_SERVICE -Force -ErrorAction Stop',
  restart: 'Restart-Service -Name $env:RMM_SERVICE -Force -ErrorAction Stop',
  enable: 'Set-Service -Name $env:RMM_SERVICE -StartupType Automatic -ErrorAction Stop',
  disable: 'Set-Service -Name $env:RMM_SERVICE -StartupType Disabled -ErrorAction Stop',
};

export async function scmAction(name: string, action: string): Promise<string> {
  await scmService(name);
  const result = await powershell(WIN_ACTIONS[action]!, { RMM_SERVICE: name }, 55_000);
  if (result.code !== 0) throw new CommandError(`${action} ${name} failed: ${outputOf(result)}`);
  return outputOf(result);
}
