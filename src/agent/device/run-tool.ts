// Runs one of the device's own tools (ps, systemctl, service, PowerShell) for the process and service
// commands: an argument array, never a shell string, so nothing an operator typed is ever parsed by a
// shell. Resolves with the exit code and the output however the tool ended; rejects only when it could
// not be started. A daemon started through an init script may keep the output pipes open after the
// script exited, so the answer comes a short grace after the exit, not when the pipes close.
import { spawn } from 'node:child_process';
import { CommandError } from '../commands/command-error.js';

export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Output kept per stream: a service list or ps output stays far below this. */
const OUTPUT_LIMIT = 3 * 1024 * 1024;
const PIPE_GRACE_MS = 500;

export interface RunOptions {
  timeoutMs?: number;
  /** Extra environment (PowerShell reads a service name from there instead of from its command text). */
  env?: Record<string, string>;
  signal?: AbortSignal;
}

export function runTool(file: string, args: readonly string[], options: RunOptions = {}): Promise<ToolResult> {
  const { timeoutMs = 30_000, env = {}, signal } = options;
  return new Promise((resolve, reject) => {
    // LC_ALL=C: the parsers read English column names, dates and states.
    const child = spawn(file, args, { env: { ...process.env, LC_ALL: 'C', LANG: 'C', ...env }, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outSize = 0;
    let errSize = 0;
    let timedOut = false;
    let settled = false;
    child.stdout.on('data', (chunk: Buffer) => {
      if (outSize < OUTPUT_LIMIT) out.push(chunk);
      outSize += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (errSize < OUTPUT_LIMIT) err.push(chunk);
      errSize += chunk.length;
    });
    const kill = () => child.kill('SIGKILL');
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    signal?.addEventListener('abort', kill, { once: true });
    const finish = (code: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut });
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new CommandError(e.code === 'ENOENT' ? `${file} is not installed on this device` : `${file}: ${e.message}`));
    });
    child.on('close', (code) => finish(code));
    child.on('exit', (code) => setTimeout(() => finish(code), PIPE_GRACE_MS).unref());
  });
}

/** stdout and stderr as one text for an operator, at most `max` characters (the end is what matters). */
export function outputOf(result: ToolResult, max = 60_000): string {
  const text = [result.stdout.trim(), result.stderr.trim()].filter(Boolean).join('\n');
  return text.length > max ? `…${text.slice(-max)}` : text;
}

/** Runs `items` through `work`, at most `limit` at a time, keeping their order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
