// Real cluster parts for tests (issue 32): a nats-server of the test's own on a free port, which the test
// may SIGKILL and start again (the shared one on 4222 is never touched), and HAProxy running the documented
// deploy/haproxy/haproxy.cfg in front of the test's servers. Both are the Debian binaries CI installs
// (.ci/run). Every process started here is killed when the test file ends, whatever happened to the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterEveryFile } from './file-cleanup.js';
import { freePort } from './free-port.js';
import { renderHaproxyConfig, serverStates, type HaproxyBackend, type ServerState } from './haproxy-config.js';

export { freePort } from './free-port.js';
export type { HaproxyBackend, ServerState } from './haproxy-config.js';

/** The HAProxy configuration docs/cluster.md describes and docker-compose.yml mounts. */
export const HAPROXY_CFG = path.resolve(import.meta.dirname, '../../deploy/haproxy/haproxy.cfg');

const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;

// ---- the binaries ----------------------------------------------------------------------------------

/** Where a command is: PATH, then the sbin directories a non-root PATH often lacks (Debian puts both there). */
export function findTool(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  return dirs.filter(Boolean).map((dir) => path.join(dir, name)).find((file) => existsSync(file));
}

/** The cluster tools not installed here. */
export function missingClusterTools(): string[] {
  return ['nats-server', 'haproxy'].filter((name) => !findTool(name));
}

/**
 * For `describe.skipIf(rig.skip)(rig.title, ...)`: locally a file without the tools is skipped with the
 * reason in its title; in CI (CI set) nothing is skipped, so a missing tool fails the file (.ci/run must
 * have installed it).
 */
export function clusterToolsSkip(title: string): { skip: boolean; title: string } {
  const missing = missingClusterTools();
  if (missing.length === 0 || process.env.CI) return { skip: false, title };
  return { skip: true, title: `${title} (skipped: ${missing.join(' and ')} not installed; apt-get install ${missing.join(' ')})` };
}

function requireTool(name: string): string {
  const file = findTool(name);
  if (!file) throw new Error(`${name} is not installed (apt-get install ${name}; .ci/run installs it in CI)`);
  return file;
}

// ---- processes -------------------------------------------------------------------------------------

/** Processes started here that have not exited yet: killed after the file's tests, even failed ones. */
const running = new Set<ChildProcess>();

afterEveryFile(async () => {
  await Promise.all([...running].map((child) => endProcess(child, 'SIGKILL')));
});

interface Daemon {
  child: ChildProcess;
  exited: Promise<void>;
}

function startProcess(file: string, args: string[], cwd: string, output: string[]): Daemon {
  const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const exited = once(child, 'exit').then(() => void running.delete(child));
  const name = path.basename(file);
  for (const stream of [child.stdout, child.stderr]) readline.createInterface({ input: stream }).on('line', (line) => output.push(`${name}: ${line}`));
  return { child, exited };
}

/** Ends a process with `signal` (SIGTERM: SIGKILL after a grace period) and waits until it is gone. */
async function endProcess(child: ChildProcess, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  const force = signal === 'SIGTERM' ? setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS) : undefined;
  await exited;
  clearTimeout(force);
}

/** Polls `ready` until it says yes; fails at once with the output if the process exits first. */
async function waitUntilReady(daemon: Daemon, ready: () => Promise<boolean>, what: string, output: string[]): Promise<void> {
  let gone = false;
  void daemon.exited.then(() => (gone = true));
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (gone) throw new Error(`${what} exited before it was ready:\n${output.join('\n')}`);
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${START_TIMEOUT_MS / 1000} s:\n${output.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}


/** Connects to 127.0.0.1:port; with `greeting`, also waits for the first line and tests it. */
export function probeTcp(port: number, greeting?: (line: string) => boolean): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.on('connect', () => (greeting ? undefined : done(true)));
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('latin1');
      const end = data.indexOf('\r\n');
      if (end >= 0) done(greeting?.(data.slice(0, end)) ?? true);
    });
    socket.on('error', () => done(false));
    socket.on('close', () => done(false));
  });
}

// ---- NATS ------------------------------------------------------------------------------------------

export interface NatsProcess {
  /** nats://127.0.0.1:<port>, for NATS_URL. */
  url: string;
  port: number;
  /** Its log lines, across restarts. */
  output: string[];
  /** SIGKILL: the server vanishes as in a crash; its clients see their connections drop. */
  kill(): Promise<void>;
  /** Starts it again on the same port (stopping it first if it still runs); resolves once it answers. */
  restart(): Promise<void>;
  /** SIGTERM, then removes its directory. Final. */
  stop(): Promise<void>;
}

/** A nats-server of its own (no JetStream: the cluster does not use it) on a free port of 127.0.0.1. */
export async function startNats(): Promise<NatsProcess> {
  const binary = requireTool('nats-server');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-nats-'));
  const port = await freePort();
  const output: string[] = [];
  let current: Daemon | null = null;
  const launch = async () => {
    const daemon = startProcess(binary, ['-a', '127.0.0.1', '-p', String(port)], dir, output);
    current = daemon;
    // A NATS server greets every client with its INFO line: then it is really the server, and serving.
    await waitUntilReady(daemon, () => probeTcp(port, (line) => line.startsWith('INFO ')), `nats-server on port ${port}`, output);
  };
  const end = async (signal: 'SIGTERM' | 'SIGKILL') => {
    const daemon: Daemon | null = current;
    current = null;
    if (daemon) await endProcess(daemon.child, signal);
  };
  try {
    await launch();
  } catch (err) {
    await end('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    output,
    kill: () => end('SIGKILL'),
    restart: async () => {
      await end('SIGTERM');
      await launch();
    },
    stop: async () => {
      await end('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// ---- HAProxy ---------------------------------------------------------------------------------------

export interface HaproxyProcess {
  port: number;
  /** http://127.0.0.1:<port>: the address agents and API clients use. */
  url: string;
  /** Its log lines (one per request, health check changes). */
  output: string[];
  /** HAProxy's view of every server in every backend now (wait for UP/DOWN with vi.waitFor). */
  serverStates(): Promise<ServerState[]>;
  stop(): Promise<void>;
}

export interface HaproxyOptions {
  /** `timeout <name>` values replacing the file's (e.g. { client: '1s' } to see a timeout within seconds). */
  timeouts?: Readonly<Record<string, string>>;
}

/**
 * HAProxy with deploy/haproxy/haproxy.cfg, listening on a free port of 127.0.0.1 and sending to the given
 * servers on 127.0.0.1 (everything else as in the file). Resolves once it accepts connections; its
 * servers count as up until their health checks say otherwise.
 */
export async function startHaproxy(backends: readonly HaproxyBackend[], options: HaproxyOptions = {}): Promise<HaproxyProcess> {
  const binary = requireTool('haproxy');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-haproxy-'));
  const port = await freePort();
  const statsSocket = path.join(dir, 'admin.sock');
  const config = path.join(dir, 'haproxy.cfg');
  const source = await readFile(HAPROXY_CFG, 'utf8');
  await writeFile(config, renderHaproxyConfig(source, { bindPort: port, backends, statsSocket, timeouts: options.timeouts }));
  const output: string[] = [];
  // -db: stay in the foreground, so the test owns the process and its log.
  const daemon = startProcess(binary, ['-f', config, '-db'], dir, output);
  const stop = async () => {
    await endProcess(daemon.child, 'SIGTERM');
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilReady(daemon, () => probeTcp(port), `haproxy on port ${port}`, output);
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, url: `http://127.0.0.1:${port}`, output, serverStates: () => serverStates(statsSocket), stop };
}
