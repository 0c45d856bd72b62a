// What the reference agent reports about the machine it runs on, checked against the machine itself
// (issue 30, items 7 and 9): each disk's used percentage as `df` shows it (reserved blocks are not free
// to the agent's users), the CPU load of now from the very first heartbeat (not the average since boot),
// and the SHA-256 of its own binary in every heartbeat, so the server clears an update request once the
// agent runs the firmware it was asked to install.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HeartbeatAnswer } from '../src/agent/server-api.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
let t: LiveServer;
let dir: string;
let admin: Record<string, string>;
let agentKey: string;
let writeKey: string;
const started: LiveAgent[] = [];
const hogs: ChildProcess[] = [];

beforeAll(async () => {
  t = await startLiveServer();
  dir = await mkdtemp(path.join(os.tmpdir(), 'agent-system-data-'));
  admin = bearer(await adminToken(t));
  agentKey = (await createKey(t.app, admin, 'agent')).key;
  writeKey = (await createKey(t.app, admin, 'write')).key;
});
afterEach(async () => {
  for (const hog of hogs.splice(0)) hog.kill('SIGKILL');
  await Promise.all(started.splice(0).map((a) => a.stop()));
});
afterAll(async () => (await t?.close(), await rm(dir, { recursive: true, force: true })));

/** An agent collecting this machine's real system data (the helper's default sends a fixed sample). */
async function startRealAgent(options: { binaryPath?: string } = {}): Promise<LiveAgent> {
  const live = await t.startAgent(agentKey, { collectSystem: undefined, ...options });
  started.push(live);
  return live;
}

async function storedSystem(id: string): Promise<Record<string, unknown>> {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/system`, headers: admin });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** `df -P`'s Capacity per mount point: used / (used + available), rounded up. */
async function dfPercents(): Promise<Map<string, number>> {
  const { stdout } = await promisify(execFile)('df', ['-P']);
  const percents = new Map<string, number>();
  for (const line of stdout.trim().split('\n').slice(1)) {
    const match = /\s(\d+)%\s+(\/.*)$/.exec(line);
    if (match) percents.set(match[2]!, Number(match[1]));
  }
  return percents;
}

describe.runIf(process.platform === 'linux')('the system data of the machine', () => {
  it("reports each disk's used percentage as df shows it", async () => {
    const before = await dfPercents();
    const { id } = await startRealAgent();
    const after = await dfPercents();
    const disks = (await storedSystem(id)).disks as Array<{ mount: string; used_percent: number; used_bytes: number; total_bytes: number }>;
    const compared = disks.filter((d) => before.has(d.mount) && after.has(d.mount));
    expect(compared.map((d) => d.mount)).toContain('/');
    for (const disk of compared) {
      // Read at nearly the same moment as df; a file written in between may move it by one.
      expect([before.get(disk.mount), after.get(disk.mount)], `${disk.mount}: agent ${disk.used_percent} %`).toContain(disk.used_percent);
    }
  });

  it('reports the load of the moment in its first heartbeat, not the average since boot', async () => {
    // Every core busy: the load now is (nearly) 100 %, whatever the machine did since it booted.
    for (let i = 0; i < os.cpus().length; i++) {
      const hog = spawn(process.execPath, ['-e', 'process.stdout.write("busy\\n"); for (;;) {}'], { stdio: ['ignore', 'pipe', 'ignore'] });
      hogs.push(hog);
      await once(hog.stdout!, 'data');
    }
    const sinceBoot = await averageSinceBoot();
    const { id } = await startRealAgent();
    const { cpu } = (await storedSystem(id)) as { cpu: { usage_percent: number } };
    expect(cpu.usage_percent, `the average since boot is ${sinceBoot.toFixed(1)} %`).toBeGreaterThanOrEqual(95);
  });
});

describe("the agent binary's SHA-256", () => {
  async function uploadFirmware(version: string, body: Buffer): Promise<void> {
    const res = await fetch(`${t.url}/api/v1/firmware/upload?version=${version}&platform=linux`, {
      method: 'POST',
      headers: { ...apiKey(writeKey), 'content-type': 'application/octet-stream' },
      body,
    });
    expect(res.status, await res.clone().text()).toBe(201);
  }
  const flagOf = async (agentId: string) => (await t.app.inject({ method: 'GET', url: `/api/v1/agents/${agentId}`, headers: admin })).json<{ update_requested: boolean }>().update_requested;

  it('goes with every heartbeat, read again when the binary is replaced, and clears the update request then', async () => {
    const binary = path.join(dir, 'rmm-agent');
    const installed = Buffer.from('#!/bin/sh\n# rmm-agent 1.0.0\n');
    const next = Buffer.from('#!/bin/sh\n# rmm-agent 1.1.0\n');
    await writeFile(binary, installed, { mode: 0o755 });
    await uploadFirmware('1.1.0', next);

    const live = await startRealAgent({ binaryPath: binary });
    expect((await storedSystem(live.id)).agent_sha256).toBe(sha(installed));
    const request = await t.app.inject({ method: 'POST', url: `/api/v1/agents/${live.id}/request-update`, headers: admin });
    expect(request.statusCode, request.body).toBe(200);

    const answers: HeartbeatAnswer[] = [];
    live.agent.on('heartbeat', (result) => result.ok && answers.push(result.answer));
    expect(await live.agent.sendHeartbeat()).toBe(true);
    expect(answers.at(-1)).toMatchObject({ update_available: true, update: { version: '1.1.0', sha256: sha(next) } });

    // The updater swaps the file by renaming a new one over it, as an installer does.
    await writeFile(`${binary}.new`, next, { mode: 0o755 });
    await rename(`${binary}.new`, binary);
    expect(await live.agent.sendHeartbeat()).toBe(true);
    expect((await storedSystem(live.id)).agent_sha256).toBe(sha(next));
    expect(answers.at(-1)).toMatchObject({ update_available: false });
    expect(await flagOf(live.id)).toBe(false);
    expect(await readFile(binary)).toEqual(next);
  });
});

/** The busy share of all CPU time since boot, from /proc/stat (what an agent's first sample used to report). */
async function averageSinceBoot(): Promise<number> {
  const fields = ((await readFile('/proc/stat', 'utf8')).split('\n', 1)[0] ?? '').trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  return ((total - fields[3]! - fields[4]!) / total) * 100;
}
