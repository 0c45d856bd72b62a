// proc_list and proc_kill (issue 59, capability `processes`) on Linux, FreeBSD and Windows. A kill
// refuses PID 1 and the agent itself (the operator would lose the device or the agent), and says
// plainly when there is no such process or the agent may not signal it.
import type { CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import type { DeviceProcess } from '../../modules/agent-hub/device-protocol.js';
import { CommandError } from '../commands/command-error.js';
import { linuxProcesses } from './proc-linux.js';
import { freebsdProcesses, powershell, windowsProcesses } from './proc-other.js';
import { outputOf } from './run-tool.js';

async function list(): Promise<DeviceProcess[]> {
  if (process.platform === 'win32') return windowsProcesses();
  if (process.platform === 'linux') return linuxProcesses();
  return freebsdProcesses();
}

export async function procList(): Promise<{ processes: DeviceProcess[] }> {
  return { processes: await list() };
}

/** The reason a pid may not be killed by the agent, or null. */
export function refusedPid(pid: number): string | null {
  if (pid === 1) return 'refusing to kill PID 1 (the init process: the device would go down)';
  if (pid === process.pid) return `refusing to kill the agent itself (PID ${pid})`;
  return null;
}

export async function procKill({ pid, signal = 'TERM' }: CommandParams<'proc_kill'>): Promise<Record<string, never>> {
  const refused = refusedPid(pid);
  if (refused) throw new CommandError(refused);
  if (process.platform === 'win32') {
    // Windows has no signals: every kill is Stop-Process -Force.
    const result = await powershell('Stop-Process -Id ([int]$env:RMM_PID) -Force -ErrorAction Stop', { RMM_PID: String(pid) });
    if (result.code === 0) return {};
    const text = outputOf(result);
    if (/cannot find a process/i.test(text)) throw new CommandError(`no such process ${pid}`);
    if (/access is denied/i.test(text)) throw new CommandError(`not permitted to kill process ${pid}`);
    throw new CommandError(`Stop-Process failed: ${text}`);
  }
  try {
    process.kill(pid, `SIG${signal}`);
    return {};
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') throw new CommandError(`no such process ${pid}`);
    if (code === 'EPERM') throw new CommandError(`not permitted to signal process ${pid}`);
    throw new CommandError(`kill ${pid} failed: ${(err as Error).message}`);
  }
}
