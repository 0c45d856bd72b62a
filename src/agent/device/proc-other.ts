// The process list on FreeBSD (ps) and Windows (PowerShell's Win32_Process), parsed from the tools'
// output. ps's %cpu is its own decaying average (per core); Windows gives no CPU % without a second,
// slow query, so it is null there, and so is the owner (GetOwner per process takes seconds).
import type { DeviceProcess } from '../../modules/agent-hub/device-protocol.js';
import { CommandError } from '../commands/command-error.js';
import { outputOf, runTool } from './run-tool.js';

/** `ps -axww -o pid,ppid,user,rss,%cpu,lstart,comm,args`; lstart is five words ("Sun Nov 29 14:20:19 2026"). */
const PS_LINE = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+([\d.,]+)\s+(\w{3}\s+\w{3}\s+\d{1,2}\s+\d{1,2}:\d{2}:\d{2}\s+\d{4})\s+(\S+)\s?(.*)$/;

export function parsePs(text: string): DeviceProcess[] {
  const processes: DeviceProcess[] = [];
  for (const line of text.split('\n').slice(1)) {
    const m = PS_LINE.exec(line);
    if (!m) continue;
    const started = new Date(m[6]!.replace(/\s+/g, ' ')); // local time, as ps prints it
    processes.push({
      pid: Number(m[1]),
      ppid: Number(m[2]),
      user: m[3]!,
      name: m[7]!,
      command: m[8]!.trim() || m[7]!,
      cpu_percent: Number(m[5]!.replace(',', '.')),
      rss_bytes: Number(m[4]) * 1024,
      started_at: Number.isNaN(started.getTime()) ? null : started.toISOString(),
    });
  }
  return processes;
}

export async function freebsdProcesses(): Promise<DeviceProcess[]> {
  const result = await runTool('ps', ['-axww', '-o', 'pid,ppid,user,rss,%cpu,lstart,comm,args']);
  if (result.code !== 0) throw new CommandError(`ps failed: ${outputOf(result)}`);
  return parsePs(result.stdout);
}

/** A CIM date as ConvertTo-Json writes it: "/Date(1700000000000)/" (PowerShell 5) or ISO text (7). */
export function cimDate(value: unknown): string | null {
  if (typeof value === 'string') {
    const ms = /\/Date\((-?\d+)\)\//.exec(value);
    const date = ms ? new Date(Number(ms[1])) : new Date(value);
    return Number.isNaN(date.getTime()) ? null : date.toISOString();
  }
  if (value && typeof value === 'object' && 'DateTime' in value) return cimDate((value as { value?: unknown }).value ?? null);
  return null;
}

/** ConvertTo-Json gives one object, not an array, when there is one item. */
export function jsonItems(text: string): Array<Record<string, unknown>> {
  const trimmed = text.trim();
  if (!trimmed) return [];
  const value: unknown = JSON.parse(trimmed);
  return (Array.isArray(value) ? value : [value]).filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null);
}

export function parseWin32Processes(text: string): DeviceProcess[] {
  return jsonItems(text).map((p) => {
    const name = String(p.Name ?? '');
    return {
      pid: Number(p.ProcessId),
      ppid: typeof p.ParentProcessId === 'number' ? p.ParentProcessId : null,
      user: null,
      name,
      command: typeof p.CommandLine === 'string' && p.CommandLine ? p.CommandLine : name,
      cpu_percent: null,
      rss_bytes: typeof p.WorkingSetSize === 'number' ? p.WorkingSetSize : null,
      started_at: cimDate(p.CreationDate),
    };
  });
}

/** Runs a PowerShell script (the script is fixed text; any operator value comes in `env`). */
export function powershell(script: string, env: Record<string, string> = {}, timeoutMs = 30_000) {
  return runTool('powershell.exe', ['-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-Command', script], { env, timeoutMs });
}

export async function windowsProcesses(): Promise<DeviceProcess[]> {
  const result = await powershell('Get-CimInstance Win32_Process | Select-Object ProcessId,ParentProcessId,Name,CommandLine,WorkingSetSize,CreationDate | ConvertTo-Json -Compress');
  if (result.code !== 0) throw new CommandError(`Get-CimInstance Win32_Process failed: ${outputOf(result)}`);
  return parseWin32Processes(result.stdout);
}
