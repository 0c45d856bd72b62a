// A device for updater tests, made of real processes: fake agent binaries (small node scripts that
// register and heartbeat over HTTP, each in a behaviour of its own: heartbeat on, once and then die, once
// and then hang, never), a service script in the manner of `systemctl start|stop|is-active` (it starts
// the binary detached, keeps its pid, and refuses to start while a marker file exists; `status`, which
// the health check runs at every poll, is answered by /bin/sh without starting node), a proxy in front
// of the server that can be cut, and a driver that moves a FakeClock while the updater sleeps on it.
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'vitest';
import { parseServiceCommand, type CommandService } from '../../src/agent/updater/service-control.js';
import type { FakeClock } from '../../src/platform/clock.js';
import type { TestApp } from './app.js';
import { adminToken, bearer, createKey } from './identity.js';
import { startLiveServer, type LiveServer } from './live-agent.js';

export const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

export type Behaviour =
  | { kind: 'good' }
  /** One heartbeat, then the process exits `afterMs` later. */
  | { kind: 'one-then-die'; afterMs: number }
  /** One heartbeat, then it keeps running without sending another. */
  | { kind: 'one-then-hang' }
  /** Runs, never heartbeats. */
  | { kind: 'never' };

/**
 * An agent binary: registers, then heartbeats every 200 ms with `variant` and its own file's SHA-256
 * (as the reference agent's `agent_sha256`), as `behaviour` says. Arguments: server URL, key, agent id.
 */
export function agentScript(variant: string, behaviour: Behaviour = { kind: 'good' }): string {
  return `#!/usr/bin/env node
'use strict';
// fake agent ${variant} ${randomBytes(4).toString('hex')}
const behaviour = ${JSON.stringify(behaviour)};
const variant = ${JSON.stringify(variant)};
const [server, key, agentId] = process.argv.slice(2);
const sha = require('node:crypto').createHash('sha256').update(require('node:fs').readFileSync(__filename)).digest('hex');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const post = async (what, body) => {
  const res = await fetch(server + '/api/v1/agent/' + what, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  await res.text();
  return res.ok;
};
setInterval(() => undefined, 60000); // stays alive whatever the loop below does
(async () => {
  if (behaviour.kind === 'never') return;
  while (!(await post('register', { agent_id: agentId, hostname: 'updater-test', platform: 'linux' }).catch(() => false))) await sleep(200);
  for (let sent = 0; ; ) {
    if (await post('heartbeat', { agent_id: agentId, platform: 'linux', agent_sha256: sha, variant }).catch(() => false)) sent++;
    if (sent >= 1 && behaviour.kind === 'one-then-die') { setTimeout(() => process.exit(4), behaviour.afterMs); return; }
    if (sent >= 1 && behaviour.kind === 'one-then-hang') return;
    await sleep(200);
  }
})();
`;
}

/**
 * The service command `svc start|stop|status`. `status` runs at every poll of a health check, so the
 * shell answers it itself: starting node for it took 40 ms on an idle machine but 0.5-1 s on a loaded
 * one, and a test's polls added up past its timeout. Running means: the pid in agent.pid exists and is
 * not a zombie (exit 0), otherwise exit 3, as `service <name> status` does. The other actions go to
 * svc.js. Both log the action to actions.log and use the files createDevice puts beside them.
 */
const SERVICE_WRAPPER = `#!/bin/sh
here=\${0%/*}
echo "$1" >> "$here/actions.log"
if [ "$1" = status ]; then
  pid=
  read -r pid 2>/dev/null < "$here/agent.pid"
  case $pid in '' | *[!0-9]*) exit 3 ;; esac
  kill -0 "$pid" 2>/dev/null || exit 3
  stat=
  read -r stat 2>/dev/null < "/proc/$pid/stat"
  state=\${stat##*) }
  [ "\${state%% *}" = Z ] && exit 3
  exit 0
fi
exec node "$here/svc.js" "$@"
`;

/** `start` and `stop` (called by the wrapper above), configured by service.json beside it. */
const SERVICE_SCRIPT = `#!/usr/bin/env node
'use strict';
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const cfg = JSON.parse(fs.readFileSync(__dirname + '/service.json', 'utf8'));
const action = process.argv[2];
const pidOf = () => { try { return Number(fs.readFileSync(cfg.pidFile, 'utf8')); } catch { return 0; } };
const alive = (pid) => {
  if (!pid) return false;
  try { process.kill(pid, 0); } catch { return false; }
  try { return fs.readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1][0] !== 'Z'; } catch { return true; }
};
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
if (action === 'start') {
  if (fs.existsSync(cfg.failMarker)) { process.stderr.write('start refused: ' + fs.readFileSync(cfg.failMarker, 'utf8')); process.exit(1); }
  if (alive(pidOf())) process.exit(0);
  const child = spawn(cfg.binary, cfg.args, { detached: true, stdio: 'ignore' });
  child.on('error', (err) => { process.stderr.write(String(err)); process.exit(1); });
  child.on('spawn', () => { fs.writeFileSync(cfg.pidFile, String(child.pid)); child.unref(); process.exit(0); });
} else if (action === 'stop') {
  const pid = pidOf();
  if (alive(pid)) {
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 100 && alive(pid); i++) pause(50);
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  process.exit(0);
} else process.exit(2);
`;

export interface Device {
  dir: string;
  binary: string;
  /** `--service-cmd` value, and the same as a ServiceControl for in-process updaters. */
  serviceCommand: string;
  service: CommandService;
  /** While this file exists, `start` fails (exit 1, its content on stderr). */
  failMarker: string;
  /** The actions the service script was asked for, in order. */
  actions(): Promise<string[]>;
  /** Pid of the agent the service started last, if it still runs. */
  runningPid(): Promise<number | null>;
  install(content: string): Promise<void>;
  remove(): Promise<void>;
}

/** A directory with the agent binary `content`, a service script running it with `args`. */
export async function createDevice(content: string, args: string[]): Promise<Device> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-device-'));
  const binary = path.join(dir, 'rmm-agent');
  const svc = path.join(dir, 'svc');
  const pidFile = path.join(dir, 'agent.pid');
  const actionsLog = path.join(dir, 'actions.log');
  const failMarker = path.join(dir, 'start.fail');
  await writeFile(path.join(dir, 'service.json'), JSON.stringify({ binary, args, pidFile, actionsLog, failMarker }));
  await writeFile(svc, SERVICE_WRAPPER);
  await chmod(svc, 0o755);
  await writeFile(path.join(dir, 'svc.js'), SERVICE_SCRIPT);
  const serviceCommand = `${svc} {action}`;
  const isAlive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const device: Device = {
    dir,
    binary,
    serviceCommand,
    service: parseServiceCommand(serviceCommand),
    failMarker,
    actions: async () => (await readFile(actionsLog, 'utf8').catch(() => '')).split('\n').filter(Boolean),
    runningPid: async () => {
      const pid = Number(await readFile(pidFile, 'utf8').catch(() => '0'));
      return pid > 0 && (await device.service.isRunning()) ? pid : null;
    },
    install: async (text) => {
      await writeFile(binary, text);
      await chmod(binary, 0o755);
    },
    remove: async () => {
      const pid = Number(await readFile(pidFile, 'utf8').catch(() => '0'));
      if (pid > 0 && isAlive(pid)) process.kill(pid, 'SIGKILL');
      await rm(dir, { recursive: true, force: true });
    },
  };
  await device.install(content);
  return device;
}

/**
 * Moves `clock` forward by `stepMs` whenever something sleeps on it, with a real pause between steps so
 * that the real processes (agents heartbeating, the server) keep pace, until `done` settles.
 */
export async function driveClock<T>(clock: FakeClock, done: Promise<T>, stepMs: number, realPauseMs = 25): Promise<T> {
  let settled = false;
  const watched = done.finally(() => {
    settled = true;
  });
  watched.catch(() => undefined);
  while (!settled) {
    if (clock.pendingSleepers > 0) await clock.advance(stepMs);
    await delay(realPauseMs);
  }
  return watched;
}

/**
 * Moves `clock` as driveClock does, but only once the updater is asleep again and the agent's real
 * heartbeat (read with `lastHeartbeat`) has moved on since then: every poll of the updater sees a newer
 * heartbeat than the one before, however slow the machine (a fixed real pause was not enough on a
 * loaded CI machine, where two polls could see the same heartbeat).
 */
export async function driveClockWithHeartbeats<T>(clock: FakeClock, done: Promise<T>, stepMs: number, lastHeartbeat: () => Promise<string | null>): Promise<T> {
  let settled = false;
  const watched = done.finally(() => {
    settled = true;
  });
  watched.catch(() => undefined);
  while (!settled) {
    if (clock.pendingSleepers === 0) {
      await delay(25);
      continue;
    }
    const seen = await lastHeartbeat();
    const until = Date.now() + 20_000;
    while (!settled && (await lastHeartbeat()) === seen) {
      if (Date.now() > until) throw new Error('driveClockWithHeartbeats: the agent stopped heartbeating');
      await delay(50);
    }
    if (!settled) await clock.advance(stepMs);
    await delay(25);
  }
  return watched;
}

/** Moves `clock` as driveClock does until `condition` holds (checked between steps). */
export async function driveClockUntil(clock: FakeClock, condition: () => Promise<boolean> | boolean, stepMs: number, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('driveClockUntil: condition not reached in time');
    if (clock.pendingSleepers > 0) await clock.advance(stepMs);
    await delay(25);
  }
}

export interface CuttableProxy {
  url: string;
  /** `METHOD path?query` of every request that came through, in order. */
  requests: string[];
  /** Stops listening (connections are refused) and resets every open connection, until restore(). */
  cut(): void;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  /** Cuts as soon as a response to a request whose path starts with `prefix` has been sent. */
  cutAfter(prefix: string): void;
  close(): Promise<void>;
}

/**
 * An HTTP proxy to `target` (the server), standing in for the network between device and server. A cut
 * refuses connections, as a server that is down does. (Accepting and then resetting them instead left
 * Node's fetch waiting forever now and then, which no real outage does.)
 */
export async function startCuttableProxy(target: string): Promise<CuttableProxy> {
  let trigger: string | null = null;
  let server: http.Server | null = null;
  let port = 0;
  const sockets = new Set<Socket>();
  const requests: string[] = [];
  const cut = () => {
    server?.close();
    server = null;
    for (const socket of sockets) socket.resetAndDestroy();
  };
  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    requests.push(`${req.method} ${req.url}`);
    const upstream = http.request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
    res.on('finish', () => {
      if (trigger !== null && (req.url ?? '').startsWith(trigger)) {
        trigger = null;
        setImmediate(cut);
      }
    });
  };
  const open = async () => {
    const listening = http.createServer(handle);
    listening.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => listening.listen(port, '127.0.0.1', resolve));
    port = (listening.address() as AddressInfo).port;
    server = listening;
  };
  await open();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    cut,
    restore: open,
    cutAfter: (prefix) => {
      trigger = prefix;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      const last = server;
      server = null;
      if (last) await new Promise<void>((resolve) => last.close(() => resolve()));
    },
  };
}

/** The agent object as an operator sees it (GET /agents/{id}, with `system`). */
export async function agentOf(t: TestApp, headers: Record<string, string>, id: string) {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    update_requested: boolean;
    last_heartbeat: string | null;
    updater: { state: string; version: string | null; message: string | null; reported_at: string } | null;
    system: { variant?: string; agent_sha256?: string } | null;
  };
}

/** Uploads firmware through the API; returns its record. */
export async function uploadFirmware(t: TestApp, headers: Record<string, string>, version: string, content: string, signature?: string) {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/v1/firmware/upload?version=${version}&platform=linux`,
    headers: { ...headers, 'content-type': 'application/octet-stream', ...(signature ? { 'x-firmware-signature': signature } : {}) },
    payload: Buffer.from(content),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { version: string; sha256: string; signature: string | null };
}

export async function requestUpdate(t: TestApp, headers: Record<string, string>, id: string): Promise<void> {
  const res = await t.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/request-update`, headers });
  expect(res.statusCode, res.body).toBe(200);
}

export interface UpdaterServer {
  live: LiveServer;
  admin: Record<string, string>;
  agentKey: string;
}

/** The live server of an updater test file, an admin's headers and an agent key for the devices. */
export async function startUpdaterServer(): Promise<UpdaterServer> {
  const live = await startLiveServer();
  const admin = bearer(await adminToken(live));
  return { live, admin, agentKey: (await createKey(live.app, admin, 'agent')).key };
}
