// The on-device updater against the real server, with a real child process as the agent: the "binary" is
// an executable node script that registers and sends heartbeats reporting the SHA-256 of its own file, run
// and replaced by the updater's PlainProcess strategy. Covers install, a corrupt download, a rollback, the
// cases with nothing to do, the poll loop, and the command line.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { PlainProcess } from '../src/agent/updater/service-control.js';
import { Updater } from '../src/agent/updater/updater.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';
import { childEnv, ROOT } from './helpers/spawn-server.js';

const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

/** A stand-in agent: registers, then every 200 ms a heartbeat with `variant` and its own file's hash. */
function agentScript(variant: string): string {
  return `#!/usr/bin/env node
'use strict';
const variant = ${JSON.stringify(variant)};
const [server, key, agentId, pidFile] = process.argv.slice(2);
const sha = require('node:crypto').createHash('sha256').update(require('node:fs').readFileSync(__filename)).digest('hex');
if (pidFile) require('node:fs').writeFileSync(pidFile, String(process.pid));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const post = async (what, body) => {
  const res = await fetch(server + '/api/v1/agent/' + what, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body),
  });
  await res.text();
  return res.ok;
};
(async () => {
  while (!(await post('register', { agent_id: agentId, hostname: 'updater-test', platform: 'linux' }).catch(() => false))) await sleep(200);
  for (;;) {
    await post('heartbeat', { agent_id: agentId, platform: 'linux', agent_sha256: sha, variant }).catch(() => false);
    await sleep(200);
  }
})();
`;
}

/** A build that dies at once: started, it never reaches the server. */
const brokenScript = (nonce: string) => `#!/usr/bin/env node\n// broken build ${nonce}\nprocess.exit(3);\n`;

let live: LiveServer;
let dataDir: string;
let admin: Record<string, string>;
let agentKey: string;
let versionCounter = 0;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-updater-data-'));
  live = await startLiveServer({ env: { DATA_DIR: dataDir } });
  admin = bearer(await adminToken(live));
  agentKey = (await createKey(live.app, admin, 'agent')).key;
});

afterAll(async () => {
  await live?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** Uploads `content` as the next (highest) linux version. */
async function uploadFirmware(content: string): Promise<{ version: string; sha256: string }> {
  const version = `2.0.${++versionCounter}`;
  const res = await live.app.inject({
    method: 'POST',
    url: `/api/v1/firmware/upload?version=${version}&platform=linux`,
    headers: { ...admin, 'content-type': 'application/octet-stream' },
    payload: Buffer.from(content),
  });
  expect(res.statusCode, res.body).toBe(201);
  const body = res.json() as { version: string; sha256: string };
  expect(body.sha256).toBe(sha256(content));
  return body;
}

async function agentView(id: string) {
  const res = await live.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers: admin });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { update_requested: boolean; last_heartbeat: string | null };
}

/** The latest heartbeat body as stored: which script variant sent it and the hash it reported. */
async function lastHeartbeat(id: string) {
  const res = await live.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/system`, headers: admin });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() ?? {}) as { variant?: string; agent_sha256?: string };
}

async function requestUpdate(id: string): Promise<void> {
  const res = await live.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/request-update`, headers: admin });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ update_requested: true });
}

/** Whether the agent's key cleared the flag (the audit log names the caller; heartbeats clear it silently). */
async function clearedWithAgentKey(id: string): Promise<boolean> {
  const res = await live.app.inject({ method: 'GET', url: '/api/v1/audit?action=agent.update_request.clear&limit=1000', headers: admin });
  expect(res.statusCode, res.body).toBe(200);
  const entries = res.json() as Array<{ actor_type: string; path: string; status_code: number }>;
  return entries.some((e) => e.actor_type === 'api_key' && e.path.includes(id) && e.status_code === 200);
}

/** Waits for a heartbeat from `variant` that arrived after `after` (an ISO time from the server, or null). */
async function waitForHeartbeatFrom(id: string, variant: string, after: string | null = null): Promise<void> {
  await vi.waitFor(
    async () => {
      expect(await lastHeartbeat(id)).toMatchObject({ variant });
      const seen = (await agentView(id)).last_heartbeat;
      expect(seen !== null && (after === null || Date.parse(seen) > Date.parse(after))).toBe(true);
    },
    { timeout: 20_000, interval: 100 },
  );
}

describe('updater with a real agent process', () => {
  let dir: string;
  let binary: string;
  let agentId: string;
  let service: PlainProcess;
  let updater: Updater;
  let logs: string[];
  const v1 = agentScript('v1');

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-updater-'));
    binary = path.join(dir, 'rmm-agent');
    await writeFile(binary, v1);
    await chmod(binary, 0o755);
    agentId = randomBytes(16).toString('hex');
    logs = [];
    service = new PlainProcess(binary, [live.url, agentKey, agentId], process.env, { stdio: 'ignore', graceMs: 2_000 });
    updater = new Updater({
      serverUrl: live.url,
      apiKey: agentKey,
      agentId,
      binaryPath: binary,
      service,
      pollIntervalMs: 200,
      healthTimeoutMs: 20_000,
      // Short windows on the real clock: the long ones are in updater-health.test.ts, on a FakeClock.
      healthWindowMs: 1_000,
      heartbeatGapMs: 3_000,
      healthPollMs: 100,
      log: (line) => logs.push(line),
    });
    await service.start();
    await waitForHeartbeatFrom(agentId, 'v1');
  });

  afterEach(async () => {
    await updater.stop();
    await service.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('installs a good new binary: the new one runs, the previous one is kept, the flag is cleared', async () => {
    const v2 = agentScript(`v2-${randomBytes(4).toString('hex')}`);
    const firmware = await uploadFirmware(v2);
    await requestUpdate(agentId);
    const oldPid = service.pid;

    expect(await updater.checkOnce(), logs.join('\n')).toEqual({ result: 'updated', version: firmware.version });

    expect(await readFile(binary, 'utf8')).toBe(v2);
    expect(await readFile(`${binary}.previous`, 'utf8')).toBe(v1);
    expect((await stat(binary)).mode & 0o777).toBe(0o755);
    expect(service.pid).not.toBe(oldPid);
    expect(await service.isRunning()).toBe(true);
    await vi.waitFor(async () => expect((await lastHeartbeat(agentId)).agent_sha256).toBe(firmware.sha256), { timeout: 10_000 });
    expect((await agentView(agentId)).update_requested).toBe(false);
    await vi.waitFor(async () => expect(await clearedWithAgentKey(agentId)).toBe(true));
  });

  it('refuses a download whose SHA-256 does not match: old binary untouched and still running, flag kept', async () => {
    const v2 = agentScript(`v2-${randomBytes(4).toString('hex')}`);
    const firmware = await uploadFirmware(v2);
    // The stored bytes go bad after the upload recorded their hash (same size, one byte different).
    await writeFile(path.join(dataDir, 'blobs', firmware.sha256), `${v2.slice(0, -2)}X\n`);
    await requestUpdate(agentId);
    const pid = service.pid;

    const outcome = await updater.checkOnce();
    expect(outcome.result, logs.join('\n')).toBe('refused');
    expect(outcome.reason).toMatch(/SHA-256 mismatch/);

    expect(await readFile(binary, 'utf8')).toBe(v1);
    expect(service.pid).toBe(pid); // never stopped
    // No download left behind, nothing replaced; the refusal is remembered beside the binary.
    expect((await readdir(dir)).sort()).toEqual(['rmm-agent', 'rmm-agent.update-memory.json']);
    const before = (await agentView(agentId)).last_heartbeat;
    await waitForHeartbeatFrom(agentId, 'v1', before);
    expect((await agentView(agentId)).update_requested).toBe(true);
  });

  it('rolls back a binary that exits at once: the old one runs again, the flag is kept, no retry of that build', async () => {
    const firmware = await uploadFirmware(brokenScript(randomBytes(4).toString('hex')));
    await requestUpdate(agentId);

    const outcome = await updater.checkOnce();
    expect(outcome, logs.join('\n')).toMatchObject({ result: 'rolled-back', version: firmware.version });
    expect(outcome.reason).toMatch(/not running/);

    expect(await readFile(binary, 'utf8')).toBe(v1);
    expect(await service.isRunning()).toBe(true);
    const after = (await agentView(agentId)).last_heartbeat;
    await waitForHeartbeatFrom(agentId, 'v1', after);
    expect(await lastHeartbeat(agentId)).toMatchObject({ agent_sha256: sha256(v1) });
    expect((await agentView(agentId)).update_requested).toBe(true);
    expect(await clearedWithAgentKey(agentId)).toBe(false);

    const pid = service.pid;
    expect(await updater.checkOnce()).toEqual({ result: 'known-bad', version: firmware.version });
    expect(service.pid).toBe(pid);
  });

  it('does nothing without the flag, and joins a check already running instead of starting a second', async () => {
    await uploadFirmware(agentScript(`v2-${randomBytes(4).toString('hex')}`));
    const pid = service.pid;

    const first = updater.checkOnce();
    expect(updater.checkOnce()).toBe(first);
    expect(await first).toEqual({ result: 'not-requested' });

    expect(await readFile(binary, 'utf8')).toBe(v1);
    expect(service.pid).toBe(pid);
  });

  it('only clears the flag when the installed binary already is the latest firmware', async () => {
    // Stopped first, so that only the updater (not a heartbeat reporting the same hash) can clear the flag.
    await service.stop();
    const firmware = await uploadFirmware(v1);
    await requestUpdate(agentId);

    expect(await updater.checkOnce()).toEqual({ result: 'already-installed', version: firmware.version });

    expect((await agentView(agentId)).update_requested).toBe(false);
    await vi.waitFor(async () => expect(await clearedWithAgentKey(agentId)).toBe(true));
    expect(await readFile(binary, 'utf8')).toBe(v1);
    expect(await service.isRunning()).toBe(false); // not restarted: there was nothing to install
  });

  it('run() polls until stop() and applies an update requested while it runs', async () => {
    const loop = updater.run();
    const v2 = agentScript(`v2-${randomBytes(4).toString('hex')}`);
    const firmware = await uploadFirmware(v2);
    await requestUpdate(agentId);

    await vi.waitFor(async () => expect((await agentView(agentId)).update_requested).toBe(false), { timeout: 30_000, interval: 200 });
    expect(await readFile(binary, 'utf8')).toBe(v2);
    await vi.waitFor(async () => expect((await lastHeartbeat(agentId)).agent_sha256).toBe(firmware.sha256), { timeout: 10_000 });

    await updater.stop();
    await loop;
  });
});

describe('npm run updater (the command line)', () => {
  function runUpdater(args: string[]) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/agent/updater/main.ts', ...args], {
      cwd: ROOT,
      env: childEnv({}),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output: string[] = [];
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    return { child, output, exited: once(child, 'exit') as Promise<[number | null, string | null]> };
  }

  it('exits 2 with the usage on bad arguments', async () => {
    const { output, exited } = runUpdater(['--server', live.url, '--key', 'k', '--agent-id', 'not-hex', '--binary', '/bin/sh']);
    expect((await exited)[0]).toBe(2);
    expect(output.join('')).toMatch(/--agent-id must be 16 to 64 hex characters[\s\S]*Usage: RMM_AGENT_KEY=KEY npm run updater/);
  });

  it('with the plain strategy starts the agent as its child and stops it on SIGTERM', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-updater-cli-'));
    try {
      const binary = path.join(dir, 'rmm-agent');
      const pidFile = path.join(dir, 'agent.pid');
      await writeFile(binary, agentScript('cli'), { mode: 0o755 });
      const agentId = randomBytes(16).toString('hex');
      const run = runUpdater(['--server', live.url, '--key', agentKey, '--agent-id', agentId, '--binary', binary, '--', live.url, agentKey, agentId, pidFile]);

      await waitForHeartbeatFrom(agentId, 'cli');
      const agentPid = Number(await readFile(pidFile, 'utf8'));
      run.child.kill('SIGTERM');
      expect((await run.exited)[0], run.output.join('')).toBe(0);
      expect(() => process.kill(agentPid, 0)).toThrow(/ESRCH/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
