// The device shell of the reference agent (issue 59): pty_open starts a shell on a pseudo-terminal through
// the PTY library the server's terminal uses (@lydell/node-pty; ConPTY on Windows), its output leaves as
// binary frames of the session and keystrokes arrive the same way; pty_resize and pty_close act on it.
// The library is native and loaded once, lazily (loadShellSupport, awaited before the agent connects):
// without it the pty commands leave the agent's table, so it never announces `shell`.
import { existsSync } from 'node:fs';
import os from 'node:os';
import type { IPty } from '@lydell/node-pty';
import type { CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import { loadPty, type PtyAvailability } from '../../modules/terminal/pty-module.js';
import type { StreamHandler, StreamPort } from '../device-streams.js';
import { CommandError, type CommandContext, type CommandTable } from '../commands/types.js';

export const SHELL_UNSUPPORTED = 'a device shell is not supported by this agent (the PTY library could not be loaded)';
export const PTY_COMMANDS = ['pty_open', 'pty_resize', 'pty_close'] as const;

let support: Promise<PtyAvailability> | undefined;

/** Loads the PTY library once per process; every later call answers the same. */
export function loadShellSupport(): Promise<PtyAvailability> {
  support ??= loadPty();
  return support;
}

/** The shell when none is asked for: $SHELL, else /bin/sh; PowerShell on Windows. */
export function defaultShell(platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): string {
  if (platform === 'win32') return 'powershell.exe';
  return env.SHELL || '/bin/sh';
}

/**
 * The shell's environment: the agent's own, without the agent's settings (RMM_AGENT_KEY is a secret the
 * person at the shell must not read), TERM for xterm.js, and what the server asked for.
 */
export function shellEnv(extra: Record<string, string> | undefined, own: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(own)) if (value !== undefined && !name.startsWith('RMM_')) env[name] = value;
  return { ...env, TERM: 'xterm-256color', ...extra };
}

/** One shell: the stream handler its session's frames and flow control reach. */
class PtyShell implements StreamHandler {
  #answered = false;
  #early: Buffer[] = [];
  #gone = false;

  constructor(
    readonly pty: IPty,
    port: StreamPort,
  ) {
    pty.onData((data) => {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : (data as Buffer);
      // Nothing precedes pty_open's answer on the socket: early output waits for it.
      if (this.#answered) port.send(bytes);
      else this.#early.push(bytes);
    });
    pty.onExit(({ exitCode }) => {
      if (this.#gone) return;
      this.#gone = true;
      const flush = () => {
        this.#flush(port);
        port.close({ exit_code: exitCode });
      };
      // The answer first, even for a shell that ends at once.
      if (this.#answered) flush();
      else setImmediate(flush);
    });
    setImmediate(() => this.#flush(port));
  }

  #flush(port: StreamPort): void {
    this.#answered = true;
    for (const bytes of this.#early.splice(0)) port.send(bytes);
  }

  data(payload: Buffer): void {
    // The PTY's socket takes a Buffer (a keystroke may be half a UTF-8 sequence); the typings name strings only.
    if (!this.#gone) this.pty.write(payload as unknown as string);
  }

  pause(): void {
    if (!this.#gone) this.pty.pause();
  }

  resume(): void {
    if (!this.#gone) this.pty.resume();
  }

  resize(cols: number, rows: number): void {
    if (!this.#gone) this.pty.resize(cols, rows);
  }

  /** pty_close or the socket closed: the shell and what it started end (its process group on Unix). */
  destroy(): void {
    if (this.#gone) return;
    this.#gone = true;
    const pid = this.pty.pid;
    if (process.platform === 'win32') {
      this.pty.kill();
      return;
    }
    // node-pty makes the shell a session leader, so its pid is its process group: hang up all of it,
    // as a closing terminal does, and kill what ignores the hang-up.
    signalGroup(pid, 'SIGHUP');
    setTimeout(() => signalGroup(pid, 'SIGKILL'), 2_000).unref();
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
    } catch {
      // already gone
    }
  }
}

function streamsOf(ctx: CommandContext) {
  if (!ctx.streams) throw new CommandError(SHELL_UNSUPPORTED);
  return ctx.streams;
}

export async function ptyOpen(params: CommandParams<'pty_open'>, ctx: CommandContext): Promise<{ pid: number; shell: string }> {
  const streams = streamsOf(ctx);
  const available = await loadShellSupport();
  if (!available.available) throw new CommandError(SHELL_UNSUPPORTED);
  const shell = params.shell ?? defaultShell();
  const home = existsSync(os.homedir()) ? os.homedir() : process.platform === 'win32' ? process.cwd() : '/';
  let pid = 0;
  await streams.open(params.session_id, async (port) => {
    let pty: IPty;
    try {
      pty = available.pty.spawn(shell, [], { name: 'xterm-256color', cols: params.cols, rows: params.rows, cwd: home, env: shellEnv(params.env), encoding: null });
    } catch (err) {
      throw new CommandError(`cannot start ${shell}: ${(err as Error).message}`);
    }
    pid = pty.pid;
    return new PtyShell(pty, port);
  });
  return { pid, shell };
}

export async function ptyResize(params: CommandParams<'pty_resize'>, ctx: CommandContext): Promise<Record<string, never>> {
  const shell = streamsOf(ctx).handler<PtyShell>(params.session_id);
  if (!(shell instanceof PtyShell)) throw new CommandError(`no shell session ${params.session_id}`);
  shell.resize(params.cols, params.rows);
  return {};
}

export async function ptyClose(params: CommandParams<'pty_close'>, ctx: CommandContext): Promise<Record<string, never>> {
  const streams = streamsOf(ctx);
  // Closing one that already ended is no error: the shell may have exited as the server closed it.
  if (streams.handler(params.session_id) instanceof PtyShell) streams.end(params.session_id);
  return {};
}

/** The pty commands, for the agent's command table. */
export const ptyHandlers: Pick<Required<CommandTable>, (typeof PTY_COMMANDS)[number]> = { pty_open: ptyOpen, pty_resize: ptyResize, pty_close: ptyClose };
