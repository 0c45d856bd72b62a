// HAProxy for the cluster capacity bench: the documented deploy/haproxy/haproxy.cfg, rendered as the
// cluster tests render it (only its bind and server addresses change, plus an admin socket), so the load
// balancer measured is the one operators copy. Not the tests' rig (test/helpers/cluster-rig.ts), which
// registers vitest hooks; this one is stopped by the bench itself.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { renderHaproxyConfig, showStat, type HaproxyBackend } from '../../test/helpers/haproxy-config.js';
import { freePort } from '../../test/helpers/free-port.js';
import { installedBinary, stopChild } from './cluster-processes.js';

const HAPROXY_CFG = path.resolve(import.meta.dirname, '../../deploy/haproxy/haproxy.cfg');

export interface Haproxy {
  /** http://127.0.0.1:<port>: where agents and API clients go. */
  url: string;
  pid: number;
  /** Connections open now per server of the sockets' backend (the agents' WebSockets), from `show stat`. */
  socketsPerServer(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

export async function startHaproxy(backends: readonly HaproxyBackend[]): Promise<Haproxy> {
  const binary = await installedBinary('haproxy');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-haproxy-'));
  const port = await freePort();
  const statsSocket = path.join(dir, 'admin.sock');
  const config = path.join(dir, 'haproxy.cfg');
  await writeFile(config, renderHaproxyConfig(await readFile(HAPROXY_CFG, 'utf8'), { bindPort: port, backends, statsSocket }));
  // -db: in the foreground, owned by the bench. Its log (a line per request, to stdout as configured) is
  // written and dropped, as a deployment writes it somewhere: that work is part of HAProxy's CPU.
  const stderr: string[] = [];
  const child = spawn(binary, ['-f', config, '-db'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const stop = async () => {
    await stopChild(child, 5000);
    await rm(dir, { recursive: true, force: true });
  };
  for (let i = 0; i < 150 && !(await accepts(port)); i++) {
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  if (child.exitCode !== null || !(await accepts(port))) {
    await stop();
    throw new Error(`haproxy did not start: ${stderr.join('')}`);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    socketsPerServer: async () => {
      const rows = (await showStat(statsSocket)).filter((r) => r.pxname === 'rmm_sockets' && r.svname !== 'FRONTEND' && r.svname !== 'BACKEND');
      return Object.fromEntries(rows.map((r) => [r.svname ?? '', Number(r.scur)]));
    },
    stop,
  };
}
