// A real desktop for the remote-desktop tests (issue 60): Xvfb on a display it picks itself, its root
// painted one known colour (xsetroot), an xterm at the top left running sh in a known directory, and
// x11vnc serving it on 127.0.0.1 only, with a VNC password (-rfbauth). Each program runs in its own
// process group, so stop() ends them and anything they started. `.ci/run` installs the Debian packages.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);

export const X_DESKTOP_TOOLS = ['Xvfb', 'x11vnc', 'xterm', 'xsetroot'] as const;

/** The tools this machine lacks, from X_DESKTOP_TOOLS (none: the desktop can be started). */
export function missingXTools(): string[] {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const found = (tool: string) =>
    dirs.some((dir) => {
      try {
        accessSync(path.join(dir, tool), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  return X_DESKTOP_TOOLS.filter((tool) => !found(tool));
}

export interface XDesktop {
  display: string;
  /** x11vnc's port on 127.0.0.1. */
  vncPort: number;
  password: string;
  /** The root window's colour, as `#rrggbb` and as bytes. */
  rootColour: { hex: string; rgb: [number, number, number] };
  /** The xterm's shell starts here. */
  shellDir: string;
  stop(): Promise<void>;
}

export async function startXDesktop(options: { width?: number; height?: number; password?: string } = {}): Promise<XDesktop> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-xdesk-'));
  const children: ChildProcess[] = [];
  const spawnGroup = (command: string, args: string[], extra: { display?: string; fds?: number } = {}) => {
    const stdio: Array<'ignore' | 'pipe'> = ['ignore', 'ignore', 'pipe', ...Array<'pipe'>(extra.fds ?? 0).fill('pipe')];
    // HOME and SHELL in the temporary directory: no rc file of this machine's user runs in the xterm.
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, SHELL: '/bin/sh', ...(extra.display ? { DISPLAY: extra.display } : {}) };
    const child = spawn(command, args, { cwd: dir, env, stdio, detached: true });
    children.push(child);
    return child;
  };
  const stop = async () => {
    for (const child of children.reverse()) {
      if (child.exitCode !== null || child.signalCode !== null || !child.pid) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        continue;
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const width = options.width ?? 1024;
    const height = options.height ?? 768;
    // -displayfd: Xvfb picks a free display and writes its number on fd 3 once it accepts clients.
    // -noreset: otherwise the server resets when its last client leaves, and xsetroot's colour goes with it.
    const xvfb = spawnGroup('Xvfb', ['-displayfd', '3', '-screen', '0', `${width}x${height}x24`, '-nolisten', 'tcp', '-noreset'], { fds: 1 });
    const display = `:${(await firstLine(xvfb, 3, 10_000)).trim()}`;
    const rootColour = { hex: '#2a7f62', rgb: [0x2a, 0x7f, 0x62] as [number, number, number] };
    await run('xsetroot', ['-display', display, '-solid', rootColour.hex]);
    spawnGroup('xterm', ['-display', display, '-geometry', '80x24+0+0', '-e', '/bin/sh'], { display });
    const password = options.password ?? 'desk-pw-1';
    const passwordFile = path.join(dir, 'vncpasswd');
    await run('x11vnc', ['-storepasswd', password, passwordFile]);
    const vncPort = await freePort();
    spawnGroup('x11vnc', ['-display', display, '-localhost', '-rfbport', String(vncPort), '-rfbauth', passwordFile, '-forever', '-shared', '-quiet'], { display });
    await rfbBanner(vncPort, 15_000);
    return { display, vncPort, password, rootColour, shellDir: dir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The first line a child writes on one of its pipes, or an error naming its stderr. */
function firstLine(child: ChildProcess, fd: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    let stderr = '';
    child.stdio[2]?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    child.stdio[fd]?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (!text.includes('\n')) return;
      clearTimeout(timer);
      resolve(text.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)));
  });
}

/** Waits until the VNC server greets a connection with its RFB version. */
async function rfbBanner(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const banner = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.setTimeout(1000, () => socket.destroy());
      socket.once('data', (data) => {
        resolve(data.toString('latin1'));
        socket.destroy();
      });
      socket.once('error', () => resolve(''));
      socket.once('close', () => resolve(''));
    });
    if (banner.startsWith('RFB ')) return;
    if (Date.now() > deadline) throw new Error(`x11vnc did not answer on 127.0.0.1:${port}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
