// One web-terminal session (contract §11): a PTY running the configured shell, its output sent as
// binary WebSocket messages, keystrokes taken from binary messages, and text messages read as JSON
// control frames (only `resize` today). The shell is killed when the socket closes; the socket closes
// when the shell exits or nothing happens for the idle limit. Output pauses while the socket's send
// queue is long, so a slow browser cannot make the server buffer without bound.
import { existsSync } from 'node:fs';
import os from 'node:os';
import type { IPty } from '@lydell/node-pty';
import type { WebSocket } from 'ws';
import { z } from 'zod';
import { DrainWatch } from '../agent-hub/drain-watch.js';
import type { PtyModule } from './pty-module.js';

export const IDLE_LIMIT_MS = 30 * 60_000;
const HIGH_WATER = 1024 * 1024;

const controlFrame = z.discriminatedUnion('type', [
  z.object({ type: z.literal('resize'), cols: z.number().int().min(1).max(1000), rows: z.number().int().min(1).max(1000) }),
]);

/**
 * A text message of a terminal WebSocket (the server's and a device's) as its control frame; undefined
 * for anything else: an unknown or malformed control frame changes nothing.
 */
export function parseControlFrame(data: Buffer): z.infer<typeof controlFrame> | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  const control = controlFrame.safeParse(parsed);
  return control.success ? control.data : undefined;
}

/** TERMINAL_SHELL, else /bin/bash where it exists, else /bin/sh. */
export function shellPath(configured: string | undefined): string {
  if (configured) return configured;
  return existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
}

export interface SessionEnd {
  /** Why it ended: the client left, the shell exited, or it sat idle. */
  reason: 'client' | 'shell' | 'idle';
  durationMs: number;
}

export class TerminalSession {
  readonly #pty: IPty;
  readonly #startedAt = Date.now();
  #idleTimer: NodeJS.Timeout | undefined;
  #ended = false;

  constructor(
    private readonly ws: WebSocket,
    pty: PtyModule,
    options: { shell: string; cols: number; rows: number; username: string },
    private readonly onEnd: (end: SessionEnd) => void,
  ) {
    // A service user's home may not exist (useradd --system, nobody's /nonexistent): the shell starts in /.
    const home = existsSync(os.homedir()) ? os.homedir() : '/';
    // A small, explicit environment: the server's own (database URL, secrets) must not reach the shell.
    const env = { HOME: home, PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', TERM: 'xterm-256color', LANG: process.env.LANG ?? 'C.UTF-8', RMM_USER: options.username };
    this.#pty = pty.spawn(options.shell, [], { name: 'xterm-256color', cols: options.cols, rows: options.rows, cwd: home, env, encoding: null });
    const drain = new DrainWatch(ws, HIGH_WATER / 4);
    this.#pty.onData((data) => {
      this.#touch();
      ws.send(data, drain.sent);
      if (ws.bufferedAmount > HIGH_WATER) {
        this.#pty.pause();
        drain.whenDrained(() => this.#pty.resume());
      }
    });
    this.#pty.onExit(() => this.#end('shell'));
    ws.on('message', (data, isBinary) => this.#fromClient(data as Buffer, isBinary));
    ws.on('close', () => this.#end('client'));
    ws.on('error', () => this.#end('client'));
    this.#touch();
  }

  /** Process id of the shell (tests check it is gone after the session). */
  get pid(): number {
    return this.#pty.pid;
  }

  #fromClient(data: Buffer, isBinary: boolean): void {
    this.#touch();
    if (isBinary) {
      // Bytes as they came (a keystroke may be half a UTF-8 sequence): the PTY's socket takes a Buffer,
      // though this package's typings name only strings (node-pty's own take Buffers too).
      this.#pty.write(data as unknown as string);
      return;
    }
    // Keystrokes come as binary messages.
    const control = parseControlFrame(data);
    if (control) this.#pty.resize(control.cols, control.rows);
  }

  #touch(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => this.#end('idle'), IDLE_LIMIT_MS).unref();
  }

  #end(reason: SessionEnd['reason']): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#idleTimer);
    try {
      this.#pty.kill('SIGHUP'); // as a closing terminal does; the shell ends its jobs
    } catch {
      // already gone
    }
    // A shell that ignores the hang-up does not outlive its session.
    const pid = this.#pty.pid;
    setTimeout(() => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }, 2_000).unref();
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(reason === 'idle' ? 4008 : 1000, reason === 'idle' ? 'idle' : 'shell exited');
    this.onEnd({ reason, durationMs: Date.now() - this.#startedAt });
  }
}
