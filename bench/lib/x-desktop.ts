// The desktop the remote-desktop bench watches: Xvfb with a root window that changes colour all over
// several times a second (xsetroot in a shell loop), x11vnc serving it on loopback without a password,
// and Debian's websockify in front of it as noVNC's usual path. Each part is a process of its own;
// close() stops them in reverse order. A missing tool fails start-up with the Debian package to install.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../test/helpers/free-port.js';
import { reapedCpuMs, stop } from './relay-processes.js';

const PACKAGES: Record<string, string> = { Xvfb: 'xvfb', x11vnc: 'x11vnc', xsetroot: 'x11-xserver-utils', websockify: 'websockify' };

export interface XDesktop {
  display: string;
  vncPort: number;
  websockifyPort: number;
  /** websockify's CPU so far (its connection processes counted once they ended), ms. */
  websockifyCpuMs(): Promise<number>;
  close(): Promise<void>;
}

function started(command: string, args: string[], env: NodeJS.ProcessEnv = process.env, extraFd = false): ChildProcess {
  const child = spawn(command, args, { env, stdio: extraFd ? ['ignore', 'ignore', 'pipe', 'pipe'] : ['ignore', 'ignore', 'pipe'] });
  child.once('error', () => undefined); // reported by the start-up checks below
  return child;
}

/** Resolves once `port` accepts connections; throws when `child` exits first or after 15 s. */
async function listening(child: ChildProcess, port: number, what: string): Promise<void> {
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-400)));
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(100)) {
    if (child.exitCode !== null || child.pid === undefined) throw new Error(`${what} exited: ${stderr.trim() || 'no output'}`);
    const up = await new Promise<boolean>((resolve) => {
      const probe = net.connect(port, '127.0.0.1', () => (probe.destroy(), resolve(true)));
      probe.once('error', () => resolve(false));
    });
    if (up) return;
  }
  throw new Error(`${what} did not listen on ${port} within 15 s`);
}

/** The display Xvfb chose (-displayfd), written on its fourth descriptor. */
async function displayOf(xvfb: ChildProcess): Promise<string> {
  const pipe = xvfb.stdio[3] as NodeJS.ReadableStream;
  const timeout = sleep(15_000).then(() => {
    throw new Error('Xvfb named no display within 15 s');
  });
  const [data] = (await Promise.race([once(pipe, 'data'), once(xvfb, 'exit').then(() => [Buffer.from('')]), timeout])) as [Buffer];
  const display = data.toString().trim();
  if (!/^\d+$/.test(display)) throw new Error('Xvfb did not start');
  return `:${display}`;
}

/** Starts the desktop; `changeMs`: how long each colour stays. `vncPort`: x11vnc's port (free one when 0). */
export async function startXDesktop(options: { changeMs: number; vncPort: number; size: string }): Promise<XDesktop> {
  const children: ChildProcess[] = [];
  const close = async () => {
    for (const child of children.reverse()) await stop(child);
  };
  const missing = Object.keys(PACKAGES).filter((tool) => !process.env.PATH?.split(':').some((dir) => dir && existsSync(`${dir}/${tool}`)));
  if (missing.length) throw new Error(`missing ${missing.join(', ')} (Debian: apt-get install ${missing.map((t) => PACKAGES[t]).join(' ')})`);
  try {
    const xvfb = started('Xvfb', ['-displayfd', '3', '-screen', '0', `${options.size}x24`, '-nolisten', 'tcp'], process.env, true);
    children.push(xvfb);
    const display = await displayOf(xvfb);
    const env = { ...process.env, DISPLAY: display };
    const pause = (options.changeMs / 1000).toFixed(3);
    children.push(started('sh', ['-c', `while :; do xsetroot -solid '#2050a0'; sleep ${pause}; xsetroot -solid '#c08020'; sleep ${pause}; done`], env));
    const vncPort = options.vncPort || (await freePort());
    const x11vnc = started('x11vnc', ['-display', display, '-localhost', '-rfbport', String(vncPort), '-nopw', '-forever', '-shared', '-quiet'], env);
    children.push(x11vnc);
    await listening(x11vnc, vncPort, 'x11vnc');
    const websockifyPort = await freePort();
    const websockify = started('websockify', [`127.0.0.1:${websockifyPort}`, `127.0.0.1:${vncPort}`]);
    children.push(websockify);
    await listening(websockify, websockifyPort, 'websockify');
    return { display, vncPort, websockifyPort, websockifyCpuMs: () => reapedCpuMs(websockify.pid!), close };
  } catch (err) {
    await close();
    throw err;
  }
}
