// For the cluster benchmark: a nats-server and RMM server instances as processes of their own (the way an
// operator runs them, each with its own event loop and CPU), their CPU read from /proc, and an admin and
// an agent key made through the first instance's API.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { constants } from 'node:fs';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { SERVER_NODE_ENV, SERVER_NODE_FLAGS } from '../../src/platform/node-flags.js';
import { freePort } from '../../test/helpers/free-port.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Kernel clock ticks per second for /proc/<pid>/stat (100 on Linux). */
const TICKS_PER_S = 100;

export interface Proc {
  child: ChildProcess;
  port: number;
  /** http://127.0.0.1:<port>/api/v1 */
  api: string;
  stop(): Promise<void>;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process exited. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export interface NatsServer {
  url: string;
  pid: number;
  /** http://127.0.0.1:<port> of its monitoring endpoint (/varz: message counters), when asked for. */
  monitorUrl?: string;
  stop(): Promise<void>;
}

/** Where Debian's package (or a local install) put `name`; throws saying what to install when none did. */
export async function installedBinary(name: string): Promise<string> {
  const candidates = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin'].map((dir) => path.join(dir, name));
  const file = (await Promise.all(candidates.map((f) => access(f, constants.X_OK).then(() => f, () => undefined)))).find(Boolean);
  if (!file) throw new Error(`${name} is not installed (apt-get install ${name})`);
  return file;
}

/** nats-server on a free port of 127.0.0.1 (with `monitor`, its HTTP monitoring too); resolves once it accepts connections. */
export async function startNatsServer(options: { monitor?: boolean } = {}): Promise<NatsServer> {
  const port = await freePort();
  const monitorPort = options.monitor ? await freePort() : undefined;
  const file = await installedBinary('nats-server');
  const monitorArgs = monitorPort ? ['-m', String(monitorPort)] : [];
  const child = spawn(file, ['-a', '127.0.0.1', '-p', String(port), ...monitorArgs], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return { url: `nats://127.0.0.1:${port}`, pid: child.pid!, ...(monitorPort ? { monitorUrl: `http://127.0.0.1:${monitorPort}` } : {}), stop: () => stopChild(child) };
    await sleep(100);
  }
  await stopChild(child);
  throw new Error('nats-server did not start');
}

/** An RMM server process (src/main.ts) with `env`, at the production log level, its log to /dev/null. */
export async function startInstance(env: Record<string, string>): Promise<Proc> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-instance-'));
  const base = { ...process.env };
  delete base.DATABASE_URL;
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, '--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...base, ...SERVER_NODE_ENV, HOST: '127.0.0.1', PORT: '0', CALLSTATUS_PORT: '0', LOG_LEVEL: 'info', DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const match = /Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
      // Once listening, the log is read and dropped (a full pipe would stall the server).
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`instance exited (${code}) before listening`)));
  });
  return {
    child,
    port,
    api: `http://127.0.0.1:${port}/api/v1`,
    stop: async () => {
      await stopChild(child);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * CPU milliseconds (user + system) process `pid` has used so far; with `reapedChildren`, also that of its
 * children that exited and were waited for (a forking relay such as `socat … fork` serves each connection
 * in a child of its own).
 */
export async function pidCpuMs(pid: number, reapedChildren = false): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime, cutime, cstime: fields 14 to 17 of the line.
  const ticks = Number(fields[11]) + Number(fields[12]) + (reapedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
  return (ticks / TICKS_PER_S) * 1000;
}

/** CPU milliseconds (user + system) the processes have used so far. */
export async function cpuMs(procs: readonly Proc[]): Promise<number> {
  let total = 0;
  for (const p of procs) total += await pidCpuMs(p.child.pid!);
  return total;
}

export async function json<T>(url: string, init: RequestInit & { body?: string } = {}): Promise<T> {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Signs in as admin on `api` and makes an admin key and an agent key. */
export async function makeKeys(api: string, password: string): Promise<{ admin: string; agent: string }> {
  const { token } = await json<{ token: string }>(`${api}/auth/login`, { method: 'POST', body: JSON.stringify({ username: 'admin', password }) });
  const make = async (permissions: string) =>
    (await json<{ key: string }>(`${api}/apikeys`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ name: `bench ${permissions}`, permissions }) })).key;
  return { admin: await make('admin'), agent: await make('agent') };
}
