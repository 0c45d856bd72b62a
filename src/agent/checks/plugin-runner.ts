// Runs a Nagios-convention plugin: an executable from an argument array (never a shell string), or a
// library script written to a temporary file and run by its interpreter. The plugin leads a process
// group of its own so that its timeout (or the removal of its check) ends everything it started:
// SIGTERM first, SIGKILL 2 s later. Only MAX_PLUGIN_OUTPUT_BYTES of stdout are kept, but the pipe keeps
// being drained: a plugin blocked on a full pipe would never exit and would hold its slot until timeout.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MAX_PLUGIN_OUTPUT_BYTES } from '../../modules/checks/check-protocol.js';
import { cutOutput, parsePluginOutput, UNKNOWN, type CheckOutcome } from './nagios-output.js';

/** Between SIGTERM and SIGKILL: time for a plugin to clean up after itself. */
export const KILL_GRACE_MS = 2000;
/** After the plugin exited, how long a grandchild may keep the pipes open before the run ends anyway. */
const PIPE_GRACE_MS = 1000;
/** stderr is only shown when stdout says nothing; a little of it is enough to tell why. */
const STDERR_BYTES = 4096;

export interface PluginRun {
  file: string;
  args: readonly string[];
  timeoutMs: number;
  /** Aborted when the check is removed or the agent stops: the plugin is killed, its result is of no use. */
  signal?: AbortSignal;
}

/** The abort reason of a check's timeout: a plugin aborted with it reports "timed out", not "killed". */
export const TIMED_OUT = 'check timed out';

export type ScriptShell = 'sh' | 'bash' | 'powershell' | 'cmd';

export function runPlugin({ file, args, timeoutMs, signal }: PluginRun): Promise<CheckOutcome> {
  return new Promise((resolve) => {
    const windows = process.platform === 'win32';
    let child: ChildProcess;
    try {
      // detached: the plugin leads a new process group (POSIX), the unit a timeout kills.
      child = spawn(file, [...args], { detached: !windows, windowsHide: true, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      resolve(unknown(`cannot start ${file}: ${(err as Error).message}`));
      return;
    }
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let cut = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      const room = MAX_PLUGIN_OUTPUT_BYTES - outBytes;
      if (chunk.length > room) cut = true;
      if (room > 0) stdout.push(room < chunk.length ? chunk.subarray(0, room) : chunk);
      outBytes += Math.min(room > 0 ? room : 0, chunk.length);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (errBytes < STDERR_BYTES) stderr.push(chunk);
      errBytes += chunk.length;
    });

    let timedOut = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;

    const kill = () => {
      if (killTimer) return;
      signalGroup(child, 'SIGTERM');
      // Kept even after the leader exited: a child of the plugin that ignores SIGTERM still goes.
      killTimer = setTimeout(() => signalGroup(child, 'SIGKILL'), KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    const onAbort = () => {
      if (signal?.reason === TIMED_OUT) timedOut = true;
      kill();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();

    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      signal?.removeEventListener('abort', onAbort);
      child.stdout!.destroy();
      child.stderr!.destroy();
      if (timedOut) {
        resolve(unknown(`UNKNOWN - plugin timed out after ${Math.round(timeoutMs / 1000)} s`));
        return;
      }
      const text = Buffer.concat(stdout).toString('utf8');
      const outcome = parsePluginOutput(text, exit?.signal ? null : (exit?.code ?? null));
      if (!outcome.output) {
        const err = Buffer.concat(stderr).toString('utf8').trim().slice(0, 1000);
        const how = exit?.signal ? `killed by ${exit.signal}` : `exit code ${exit?.code ?? '?'}`;
        outcome.output = `(no output from the plugin, ${how})${err ? `: ${err}` : ''}`;
      } else if (exit?.signal) {
        outcome.output = cutOutput(`${outcome.output}\n(plugin killed by ${exit.signal})`);
      }
      if (cut) outcome.output = cutOutput(`${cutOutput(outcome.output, 3900)}\n(plugin output cut at ${MAX_PLUGIN_OUTPUT_BYTES} bytes)`);
      resolve(outcome);
    };

    child.once('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(unknown(startError(file, err)));
    });
    child.once('exit', (code, sig) => {
      exit = { code, signal: sig };
      // A grandchild left in the group may hold the pipes open: do not wait on it for long.
      graceTimer = setTimeout(() => {
        if (!killTimer) signalGroup(child, 'SIGKILL');
        finish();
      }, PIPE_GRACE_MS);
    });
    child.once('close', finish);
  });
}

/** Writes a library script to a private temporary file, runs it with its interpreter, removes it. */
export async function runScript(shell: ScriptShell, body: string, args: readonly string[], timeoutMs: number, signal?: AbortSignal): Promise<CheckOutcome> {
  if (shell === 'cmd' && process.platform !== 'win32') return unknown(`UNKNOWN - a cmd script runs on Windows only, not on ${process.platform}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-check-'));
  try {
    const file = path.join(dir, `check${EXTENSIONS[shell]}`);
    await writeFile(file, shell === 'cmd' ? body.replace(/\r?\n/g, '\r\n') : body, { mode: 0o700 });
    const [interpreter, ...before] = interpreterOf(shell);
    return await runPlugin({ file: interpreter!, args: [...before, file, ...args], timeoutMs, ...(signal ? { signal } : {}) });
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

const EXTENSIONS: Record<ScriptShell, string> = { sh: '.sh', bash: '.sh', powershell: '.ps1', cmd: '.cmd' };

function interpreterOf(shell: ScriptShell): string[] {
  switch (shell) {
    case 'sh':
      return ['/bin/sh'];
    case 'bash':
      return ['bash'];
    case 'powershell':
      // PowerShell 7 is `pwsh` outside Windows; Windows PowerShell is on every Windows.
      return [process.platform === 'win32' ? 'powershell.exe' : 'pwsh', '-NoLogo', '-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-File'];
    case 'cmd':
      return ['cmd.exe', '/d', '/c'];
  }
}

function startError(file: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') return `UNKNOWN - plugin not found: ${file} does not exist on this device`;
  if (err.code === 'EACCES') return `UNKNOWN - plugin not executable: ${file} (permission denied)`;
  return `UNKNOWN - cannot start ${file}: ${err.message}`;
}

function unknown(output: string): CheckOutcome {
  return { state: UNKNOWN, output: cutOutput(output), perfdata: [] };
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  if (process.platform === 'win32') {
    // No process groups or signals: taskkill ends the tree, SIGTERM or not.
    spawn('taskkill', ['/pid', String(child.pid), '/T', '/F'], { windowsHide: true, stdio: 'ignore' }).on('error', () => child.kill());
    return;
  }
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}
