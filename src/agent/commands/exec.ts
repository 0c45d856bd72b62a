// `exec`: runs a shell command for real (/bin/sh -c, cmd.exe /c on Windows) in its own process group,
// kills the whole group when the timeout passes or the agent stops, and caps what it returns so the
// answer always fits in one WebSocket message.
import { spawn, type ChildProcess } from 'node:child_process';
import { MAX_MESSAGE_BYTES, type CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import { CommandError, type CommandContext } from './types.js';

/** At most this many bytes of stdout and of stderr each are kept. */
export const EXEC_OUTPUT_LIMIT = 1024 * 1024;
/** Room left in a message for the frame around the output. */
const FRAME_BUDGET = MAX_MESSAGE_BYTES - 64 * 1024;
/** After a kill, how long to wait for the pipes to close (a detached grandchild may hold them). */
const PIPE_GRACE_MS = 2000;

export interface ExecResult {
  exit_code: number | null;
  /** The signal that ended the process, when one did. */
  signal: string | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  duration_ms: number;
}

class CappedOutput {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    const room = this.limit - this.size;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

export function execHandler(params: CommandParams<'exec'>, ctx: CommandContext): Promise<ExecResult> {
  return runShell(params.command, params.timeout * 1000, ctx.signal);
}

export function runShell(command: string, timeoutMs: number, signal?: AbortSignal, limit = EXEC_OUTPUT_LIMIT): Promise<ExecResult> {
  if (signal?.aborted) return Promise.reject(new CommandError('the agent is stopping'));
  const started = Date.now();
  const child = spawnShell(command);
  const stdout = new CappedOutput(limit);
  const stderr = new CappedOutput(limit);
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));

  return new Promise<ExecResult>((resolve, reject) => {
    let timedOut = false;
    let exit: { code: number | null; signal: string | null } | null = null;
    let graceTimer: NodeJS.Timeout | undefined;
    let settled = false;

    const cleanup = () => {
      settled = true;
      clearTimeout(timeoutTimer);
      clearTimeout(graceTimer);
      signal?.removeEventListener('abort', onAbort);
    };
    const finish = () => {
      if (settled) return;
      cleanup();
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve(
        fitToFrame({
          exit_code: exit?.code ?? null,
          signal: exit?.signal ?? null,
          stdout: stdout.text(),
          stderr: stderr.text(),
          timed_out: timedOut,
          stdout_truncated: stdout.truncated,
          stderr_truncated: stderr.truncated,
          duration_ms: Date.now() - started,
        }),
      );
    };
    const kill = () => {
      killTree(child);
      graceTimer ??= setTimeout(finish, PIPE_GRACE_MS);
    };
    const onAbort = () => kill();
    const timeoutTimer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);

    signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (err) => {
      if (settled) return;
      cleanup();
      reject(new CommandError(`could not start the shell: ${err.message}`));
    });
    child.once('exit', (code, sig) => {
      exit = { code, signal: sig };
      // A process left behind in the group keeps the pipes open: with a kill pending, stop waiting soon.
      if (timedOut || signal?.aborted) graceTimer ??= setTimeout(finish, PIPE_GRACE_MS);
    });
    child.once('close', finish);
  });
}

function spawnShell(command: string): ChildProcess {
  if (process.platform === 'win32') {
    return spawn('cmd.exe', ['/d', '/s', '/c', `"${command}"`], { windowsHide: true, windowsVerbatimArguments: true, stdio: ['ignore', 'pipe', 'pipe'] });
  }
  // detached: the shell leads a new process group, so a timeout can kill everything it started.
  return spawn('/bin/sh', ['-c', command], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

function killTree(child: ChildProcess): void {
  if (child.pid === undefined) return;
  if (process.platform === 'win32') {
    spawn('taskkill', ['/pid', String(child.pid), '/T', '/F'], { windowsHide: true, stdio: 'ignore' }).on('error', () => child.kill());
    return;
  }
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

/** JSON escaping can grow binary output up to 6x; halve the longer stream until the answer fits. */
function fitToFrame(result: ExecResult): ExecResult {
  const out = { ...result };
  while (Buffer.byteLength(JSON.stringify([out.stdout, out.stderr])) > FRAME_BUDGET) {
    if (out.stdout.length >= out.stderr.length) {
      out.stdout = out.stdout.slice(0, Math.floor(out.stdout.length / 2));
      out.stdout_truncated = true;
    } else {
      out.stderr = out.stderr.slice(0, Math.floor(out.stderr.length / 2));
      out.stderr_truncated = true;
    }
  }
  return out;
}
