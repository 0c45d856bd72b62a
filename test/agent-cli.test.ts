// `npm run agent` as an operator runs it (issue 30, item 9): the key from RMM_AGENT_KEY, never in the
// process list; `--key` still works but says that every user of the machine can read it there; the
// SHA-256 of the binary named by `--binary` (by default the agent's own entry file) in its heartbeats.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';
import { childEnv, PROCESS_TEST_TIMEOUT_MS, ROOT } from './helpers/spawn-server.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
let t: LiveServer;
let dir: string;
let admin: Record<string, string>;
let agentKey: string;

beforeAll(async () => {
  t = await startLiveServer();
  dir = await mkdtemp(path.join(os.tmpdir(), 'agent-cli-'));
  admin = bearer(await adminToken(t));
  agentKey = (await createKey(t.app, admin, 'agent')).key;
});
afterAll(async () => (await t?.close(), await rm(dir, { recursive: true, force: true })));

function runAgent(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/agent/main.ts', ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
  return {
    child,
    stdout,
    stderr,
    exited,
    /** SIGTERM, and the exit code (0 for a clean stop). */
    stop: async () => (child.exitCode === null && child.kill('SIGTERM'), (await exited)[0]),
  };
}
type Run = ReturnType<typeof runAgent>;

/** The system data the named agent last sent, once it has sent one. */
async function heartbeatOf(name: string, run: Run): Promise<Record<string, unknown>> {
  let id = '';
  const output = () => `${run.stdout.join('')}${run.stderr.join('')}`;
  const exitedEarly = run.exited.then(([code]) => Promise.reject(new Error(`the agent exited with ${code}: ${output()}`)));
  const heartbeatSeen = vi.waitFor(
    async () => {
      const agents = (await t.app.inject({ method: 'GET', url: `/api/v1/agents?q=${name}`, headers: admin })).json<Array<{ id: string; name: string; last_heartbeat: string | null }>>();
      const agent = agents.find((a) => a.name === name);
      expect(agent?.last_heartbeat, output()).toBeTruthy();
      id = agent!.id;
    },
    { timeout: 60_000, interval: 250 },
  );
  exitedEarly.catch(() => undefined); // only the race below reports it
  await Promise.race([heartbeatSeen, exitedEarly]);
  return (await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}/system`, headers: admin })).json();
}

const common = (name: string) => ['--server', t.url, '--name', name, '--state', path.join(dir, `${name}.json`), '--interval', '3600'];

describe('npm run agent', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('takes the key from RMM_AGENT_KEY, keeps it out of the process list and reports the SHA-256 of --binary', async () => {
    const binary = path.join(dir, 'rmm-agent');
    await writeFile(binary, '#!/bin/sh\n# the installed agent\n', { mode: 0o755 });
    const run = runAgent([...common('cli-env'), '--binary', binary], { RMM_AGENT_KEY: agentKey });
    try {
      const system = await heartbeatOf('cli-env', run);
      expect(system.agent_sha256).toBe(sha(await readFile(binary)));
      const commandLine = await readFile(`/proc/${run.child.pid}/cmdline`, 'utf8').catch(() => '');
      expect(commandLine).not.toContain(agentKey);
      expect(run.stderr.join('')).not.toMatch(/warning/i);
    } finally {
      expect(await run.stop(), run.stderr.join('')).toBe(0);
    }
  });

  it('still takes --key, warns that it shows in ps, and by default hashes its own entry file', async () => {
    const run = runAgent([...common('cli-flag'), '--key', agentKey]);
    try {
      const system = await heartbeatOf('cli-flag', run);
      expect(system.agent_sha256).toBe(sha(await readFile(path.join(ROOT, 'src/agent/main.ts'))));
      expect(run.stderr.join('')).toMatch(/warning: --key .*\bps\b.*RMM_AGENT_KEY/);
    } finally {
      expect(await run.stop(), run.stderr.join('')).toBe(0);
    }
  });

  it('prefers RMM_AGENT_KEY when --key is given too, and says the flag was ignored', async () => {
    const run = runAgent([...common('cli-both'), '--key', 'not-the-key-0123456789'], { RMM_AGENT_KEY: agentKey });
    try {
      await heartbeatOf('cli-both', run);
      expect(run.stderr.join('')).toMatch(/warning: --key ignored: RMM_AGENT_KEY is set/);
    } finally {
      expect(await run.stop(), run.stderr.join('')).toBe(0);
    }
  });

  it('--help recommends RMM_AGENT_KEY over --key and explains --binary', async () => {
    const run = runAgent(['--help']);
    expect((await run.exited)[0]).toBe(0);
    const help = run.stdout.join('');
    expect(help).toMatch(/RMM_AGENT_KEY/);
    expect(help).toMatch(/--key KEY[^\n]*\bps\b/);
    expect(help).toMatch(/--binary PATH/);
  });
});
