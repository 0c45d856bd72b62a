// Device sessions in cluster mode (issue 59: "these sessions follow the agent's instance as tunnels
// do"), with real parts: two server processes on one PostgreSQL database and a nats-server of the
// test's own, a reference agent connected to instance a, and every device call made through instance
// b. The shell's WebSocket and the file transfers are forwarded to a over HTTP between instances (their
// bytes never cross NATS); plain commands (the process list) take the bus. Cluster mode needs
// PostgreSQL, so this runs in the PostgreSQL pass.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import type { ReferenceAgent } from '../src/agent/reference-agent.js';
import { startClusterPair, type ClusterPair } from './helpers/cluster-instances.js';
import { clusterToolsSkip, startNats } from './helpers/cluster-rig.js';
import { testDbKind } from './helpers/db.js';
import { apiKey } from './helpers/identity.js';
import { PROCESS_TEST_TIMEOUT_MS } from './helpers/spawn-server.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const rig = clusterToolsSkip('cluster mode: device sessions follow the instance holding the agent');

describe.skipIf(testDbKind() !== 'postgres' || rig.skip)(rig.title, { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let c: ClusterPair;
  let onA: ReferenceAgent;
  let dir: string;

  beforeAll(async () => {
    nats = await startNats();
    c = await startClusterPair(nats.url);
    onA = await c.startAgent(c.a.url, 'device-sessions-on-a');
    dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-cluster-files-'));
    // The calls below use the admin key: API keys may use files and processes once this is on.
    expect((await c.call(c.b, 'PUT', '/settings', { device_api_keys: true })).status).toBe(200);
    await vi.waitFor(async () => expect((await c.call(c.b, 'GET', `/agents/${onA.agentId}`)).json.capabilities).toContain('files'), { timeout: 15_000 });
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await c?.close();
    await nats?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('downloads a file, a range of it, and uploads one, all through the instance without the agent', async () => {
    const content = randomBytes(3 * 1024 * 1024 + 17);
    const file = path.join(dir, 'through-b.bin');
    await writeFile(file, content);
    const url = `${c.b.api}/agents/${onA.agentId}/files/content?path=${encodeURIComponent(file)}`;
    const whole = await fetch(url, { headers: apiKey(c.adminKey) });
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-length')).toBe(String(content.length));
    expect(sha256(Buffer.from(await whole.arrayBuffer()))).toBe(sha256(content));

    const part = await fetch(url, { headers: { ...apiKey(c.adminKey), range: 'bytes=1000000-1000099' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 1000000-1000099/${content.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(content.subarray(1_000_000, 1_000_100))).toBe(true);

    const upload = randomBytes(2 * 1024 * 1024);
    const target = path.join(dir, 'uploaded-through-b.bin');
    const put = await fetch(`${c.b.api}/agents/${onA.agentId}/files/content?path=${encodeURIComponent(target)}&sha256=${sha256(upload)}`, {
      method: 'PUT',
      headers: { ...apiKey(c.adminKey), 'content-type': 'application/octet-stream' },
      body: upload,
    });
    expect(put.status, await put.clone().text()).toBe(201);
    expect(sha256(await readFile(target))).toBe(sha256(upload));
  });

  it('opens a device shell through the instance without the agent', async () => {
    const login = await fetch(`${c.b.api}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'cluster-admin-password' }),
    });
    const { token } = (await login.json()) as { token: string };
    const ws = new WebSocket(`${c.b.url.replace('http:', 'ws:')}/api/v1/agents/${onA.agentId}/shell?token=${token}`);
    let output = '';
    let sessionId = '';
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) output += data.toString('utf8');
      else sessionId = (JSON.parse(data.toString()) as { session_id: string }).session_id;
    });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
    ws.send(Buffer.from('echo $((6*7))\r'));
    // The shell's first prompt may come after the terminal echoed the typed line: "# 42" is as good as "42".
    await vi.waitFor(() => expect(output).toMatch(/(?:^|[#$] )42\r?$/m), { timeout: 15_000 });
    // Text stays text through the forwarding: the session message, and a resize that reaches the PTY.
    expect(sessionId).toMatch(/^pty-/);
    ws.send(JSON.stringify({ type: 'resize', cols: 111, rows: 33 }));
    ws.send(Buffer.from('stty size\r'));
    await vi.waitFor(() => expect(output).toContain('33 111'), { timeout: 15_000 });
    const closed = new Promise((resolve) => ws.once('close', resolve));
    ws.close();
    await closed;
    await vi.waitFor(
      async () => {
        const listed = await c.call(c.b, 'GET', `/device-sessions?agent_id=${onA.agentId}`);
        expect(listed.json).toContainEqual(expect.objectContaining({ id: sessionId, end_reason: 'closed', has_recording: true }));
      },
      { timeout: 15_000 },
    );
  });

  it('lists the device\'s processes through the instance without the agent', async () => {
    const res = await c.call(c.b, 'GET', `/agents/${onA.agentId}/processes`);
    expect(res.status).toBe(200);
    expect(res.json.processes.some((p: { pid: number }) => p.pid === process.pid)).toBe(true);
  });
});
