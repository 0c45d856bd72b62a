// The device shell (issue 59) end to end, over real sockets: the console's WebSocket to the server, the
// project's reference agent with a real PTY behind it. A write user runs `echo $((6*7))` and sees 42,
// resizes and sees `stty size` follow; the session is a row and two audit entries; its recording lists
// and, for an admin, is an asciicast with the 42 and the resize. A shell idle past the setting closes
// with 4008 (driven by the fake clock). API keys, read users, users of another customer, agents without
// the capability and users past their limit are refused before the upgrade; with recording off nothing
// is recorded, and turning it off is in the audit log.
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { pruneRecordings } from '../src/modules/device-shell/recording-retention.js';
import { BlobStore } from '../src/modules/firmware/blob-store.js';
import { FakeClock } from '../src/platform/clock.js';
import { adminToken, apiKey, bearer, createCustomer, createKey, login, seedUser } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';
import { processGone, refusalOf, typeInto } from './helpers/terminal-socket.js';
import { trackedSockets } from './helpers/ws-sockets.js';

const clock = new FakeClock(new Date());
const sockets = trackedSockets();
let s: LiveServer;
let admin: string;
let writer: string;
let agent: LiveAgent;
let bare: LiveAgent;
const users: Record<'reader' | 'other' | 'writer', string> = { reader: '', other: '', writer: '' };
const keys: Record<'write' | 'admin', string> = { write: '', admin: '' };

interface Shell {
  ws: WebSocket;
  sessionId: Promise<string>;
  output(): string;
  closed: Promise<{ code: number; reason: string }>;
}

function openShell(agentId: string, token: string, query = '', headers: Record<string, string> = {}): Promise<Shell> {
  const ws = new WebSocket(`${s.url.replace('http:', 'ws:')}/api/v1/agents/${agentId}/shell?token=${token}${query}`, { headers });
  sockets.add(ws);
  let output = '';
  let sessionId!: (id: string) => void;
  const shell: Shell = {
    ws,
    sessionId: new Promise((resolve) => (sessionId = resolve)),
    output: () => output,
    closed: new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() }))),
  };
  ws.on('message', (data: Buffer, isBinary) => {
    if (isBinary) output += data.toString('utf8');
    else sessionId((JSON.parse(data.toString()) as { session_id: string }).session_id);
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(shell));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body })));
    });
    ws.once('error', reject);
  });
}

const refusal = (agentId: string, token: string, headers: Record<string, string> = {}) => refusalOf(openShell(agentId, token, '', headers));
const type = typeInto;

const session = (id: string) => s.db.db.selectFrom('device_sessions').selectAll().where('id', '=', id).executeTakeFirst();
const ended = async (id: string) => {
  await vi.waitFor(async () => expect((await session(id))?.ended_at).not.toBeNull(), { timeout: 10_000 });
  return (await session(id))!;
};
const auditPaths = async (action: string) => {
  const res = await s.app.inject({ method: 'GET', url: `/api/v1/audit?action=${action}&limit=1000`, headers: bearer(admin) });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as Array<{ path: string; status_code: number }>).map((e) => `${e.status_code} ${e.path}`);
};
const putSettings = async (payload: Record<string, unknown>) => {
  const res = await s.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: bearer(admin), payload });
  expect(res.statusCode, res.body).toBe(200);
};

beforeAll(async () => {
  s = await startLiveServer({ clock });
  admin = await adminToken(s);
  const a = await createCustomer(s.app, admin, 'A-1');
  const b = await createCustomer(s.app, admin, 'B-1');
  const agentKey = (await createKey(s.app, bearer(admin), 'agent', a.id)).key;
  agent = await s.startAgent(agentKey, { hostname: 'shell-host' });
  bare = await s.startAgent(agentKey, { hostname: 'no-shell', withoutCommands: ['pty_open', 'pty_resize', 'pty_close'] });
  await vi.waitFor(async () => {
    const rows = await s.db.db.selectFrom('agents').select(['id', 'capabilities']).execute();
    expect(rows.find((r) => r.id === agent.id)?.capabilities).toContain('shell');
  });
  for (const [name, role, customers] of [
    ['writer', 'write', [a.id]],
    ['reader', 'read', [a.id]],
    ['other', 'write', [b.id]],
  ] as const) {
    await seedUser(s, `${name}-user`, `${name}-password-1`, { role, customer_ids: [...customers] });
    users[name] = await login(s.app, `${name}-user`, `${name}-password-1`);
  }
  writer = users.writer;
  keys.write = (await createKey(s.app, bearer(admin), 'write')).key;
  keys.admin = (await createKey(s.app, bearer(admin), 'admin')).key;
});
afterEach(async () => {
  await sockets.closeAll();
  // Their ends are recorded (and the limits counted down) before the next test.
  await vi.waitFor(async () => expect(await s.db.db.selectFrom('device_sessions').select('id').where('ended_at', 'is', null).execute()).toEqual([]), { timeout: 10_000 });
});
afterAll(() => s?.close());

describe('a write user of the agent\'s customer', () => {
  it('runs echo $((6*7)) and sees 42, resizes and sees stty size follow; the session is logged and its recording plays the same', async () => {
    const shell = await openShell(agent.id, writer, '&cols=90&rows=20');
    const id = await shell.sessionId;
    type(shell.ws, 'echo $((6*7))\r');
    await vi.waitFor(() => expect(shell.output()).toMatch(/(^|\D)42\r?\n/), { timeout: 10_000 });
    shell.ws.send(JSON.stringify({ type: 'resize', cols: 100, rows: 30 }));
    type(shell.ws, 'stty size\r');
    await vi.waitFor(() => expect(shell.output()).toContain('30 100'), { timeout: 10_000 });
    type(shell.ws, 'echo shell-pid=$$\r');
    await vi.waitFor(() => expect(shell.output()).toMatch(/shell-pid=\d+\r?\n/), { timeout: 10_000 });
    const pid = Number(/shell-pid=(\d+)\r?\n/.exec(shell.output())![1]);
    shell.ws.close();
    expect((await shell.closed).code).toBe(1005);
    // pty_close: the shell on the device is gone with its session.
    await vi.waitFor(() => expect(processGone(pid)).toBe(true), { timeout: 10_000 });

    const row = await ended(id);
    expect(row).toMatchObject({ kind: 'shell', agent_id: agent.id, actor: 'writer-user', end_reason: 'closed' });
    expect(Number(row.bytes_in)).toBeGreaterThan(0);
    expect(Number(row.bytes_out)).toBeGreaterThan(0);
    expect(row.recording_sha256).toMatch(/^[0-9a-f]{64}$/);
    await vi.waitFor(async () => expect(await auditPaths('device.shell.end')).toContainEqual(expect.stringMatching(new RegExp(`^1000 .*session=${id};.*reason=closed`))));
    expect(await auditPaths('device.shell.start')).toContainEqual(expect.stringContaining(`session=${id}`));

    // The writer lists it; only an admin reads it.
    const list = await s.app.inject({ method: 'GET', url: `/api/v1/device-sessions?agent_id=${agent.id}&kind=shell`, headers: bearer(writer) });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json()).toContainEqual(expect.objectContaining({ id, has_recording: true, agent_name: row.agent_name, end_reason: 'closed' }));
    expect((await s.app.inject({ method: 'GET', url: `/api/v1/device-sessions/${id}/recording`, headers: bearer(writer) })).statusCode).toBe(403);
    const plain = await s.app.inject({ method: 'GET', url: `/api/v1/device-sessions/${id}/recording`, headers: bearer(admin) });
    expect(plain.statusCode, plain.body).toBe(200);
    expect(plain.headers['content-type']).toContain('application/x-asciicast');
    const [header, ...events] = plain.body.trim().split('\n').map((line) => JSON.parse(line) as unknown);
    expect(header).toMatchObject({ version: 2, width: 90, height: 20, env: { TERM: 'xterm-256color' } });
    const printed = events.filter((e): e is [number, 'o', string] => (e as unknown[])[1] === 'o').map((e) => e[2]).join('');
    expect(printed).toMatch(/(^|\D)42\r?\n/);
    expect(printed).not.toContain('stty size\rstty'); // keystrokes are not recorded, only the echo
    expect(events).toContainEqual([expect.any(Number), 'r', '100x30']);
    const gz = await s.app.inject({ method: 'GET', url: `/api/v1/device-sessions/${id}/recording`, headers: { ...bearer(admin), 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString('utf8')).toBe(plain.body);
    // Other customers' users do not see it.
    const others = await s.app.inject({ method: 'GET', url: `/api/v1/device-sessions?agent_id=${agent.id}`, headers: bearer(users.other) });
    expect(others.json()).toEqual([]);
  });

  it('keeps what is typed the moment the socket opens, before the session message (a paste on connect)', async () => {
    // Four shells at once (the agent's limit), each typed into as soon as it opens: every keystroke reaches its shell.
    const shells = await Promise.all(
      [1, 2, 3, 4].map(async (n) => {
        const shell = await openShell(agent.id, writer);
        type(shell.ws, `echo early-$((${n}*11))\r`);
        return { n, shell };
      }),
    );
    for (const { n, shell } of shells) await vi.waitFor(() => expect(shell.output()).toMatch(new RegExp(`(^|\\D)early-${n * 11}\\r?\\n`)), { timeout: 10_000 });
  });

  it('loses its recording after device_recording_retention_days; the session stays', async () => {
    const recorded = await s.db.db.selectFrom('device_sessions').selectAll().where('recording_sha256', 'is not', null).execute();
    expect(recorded.length).toBeGreaterThan(0);
    const [old, ...recent] = recorded;
    const blobs = new BlobStore(path.join(s.config.dataDir, 'blobs'));
    await s.db.db.updateTable('device_sessions').set({ started_at: new Date(clock.now().getTime() - 91 * 86_400_000) }).where('id', '=', old!.id).execute();
    expect(await pruneRecordings(s.db.db, blobs, 90, clock.now())).toBe(1);
    expect(await session(old!.id)).toMatchObject({ recording_sha256: null, recording_bytes: null, end_reason: old!.end_reason });
    expect(await blobs.open(old!.recording_sha256!)).toBeUndefined();
    expect((await s.app.inject({ method: 'GET', url: `/api/v1/device-sessions/${old!.id}/recording`, headers: bearer(admin) })).statusCode).toBe(404);
    for (const row of recent) expect((await session(row.id))?.recording_sha256).toBe(row.recording_sha256);
  });

  it('is closed with 4008 after device_idle_minutes without input or output, and the end is audited as idle', async () => {
    const shell = await openShell(agent.id, writer);
    const id = await shell.sessionId;
    type(shell.ws, 'echo ready-$((1+1))\r');
    await vi.waitFor(() => expect(shell.output()).toContain('ready-2'), { timeout: 10_000 });
    await clock.advance(15 * 60_000);
    expect(await shell.closed).toEqual({ code: 4008, reason: 'idle' });
    // Access tokens follow the same clock: fresh ones for the tests after this one.
    admin = await login(s.app, 'admin', 'admin-password-1');
    writer = users.writer = await login(s.app, 'writer-user', 'writer-password-1');
    users.reader = await login(s.app, 'reader-user', 'reader-password-1');
    users.other = await login(s.app, 'other-user', 'other-password-1');
    expect((await ended(id)).end_reason).toBe('idle');
    await vi.waitFor(async () => expect(await auditPaths('device.shell.end')).toContainEqual(expect.stringMatching(new RegExp(`^4008 .*session=${id};.*reason=idle`))));
  });

  it('is closed with 4009 after device_session_max_minutes in all, however busy, and the end says why', async () => {
    await putSettings({ device_session_max_minutes: 20 });
    try {
      const shell = await openShell(agent.id, writer);
      const id = await shell.sessionId;
      for (const step of [1, 2]) {
        type(shell.ws, `echo busy-$((${step}+0))\r`);
        await vi.waitFor(() => expect(shell.output()).toContain(`busy-${step}`), { timeout: 10_000 });
        await clock.advance(10 * 60_000); // never idle for 15 minutes, 20 in all
      }
      await clock.advance(60_000);
      expect((await shell.closed).code).toBe(4009);
      writer = users.writer = await login(s.app, 'writer-user', 'writer-password-1');
      admin = await login(s.app, 'admin', 'admin-password-1');
      users.reader = await login(s.app, 'reader-user', 'reader-password-1');
      users.other = await login(s.app, 'other-user', 'other-password-1');
      expect((await ended(id)).end_reason).toMatch(/time/);
    } finally {
      await putSettings({ device_session_max_minutes: 480 });
    }
  });

  it('is refused past device_shells_per_agent (429), whoever asks', async () => {
    await putSettings({ device_shells_per_agent: 1 });
    try {
      const first = await openShell(agent.id, writer);
      await first.sessionId;
      expect(await refusal(agent.id, admin)).toEqual({ status: 429, code: 'RATE_LIMITED' });
    } finally {
      await putSettings({ device_shells_per_agent: 4 });
    }
  });

  it('is refused past device_shells_per_user (429)', async () => {
    await putSettings({ device_shells_per_user: 1 });
    try {
      const first = await openShell(agent.id, writer);
      await first.sessionId;
      expect(await refusal(agent.id, writer)).toEqual({ status: 429, code: 'RATE_LIMITED' });
    } finally {
      await putSettings({ device_shells_per_user: 10 });
    }
  });

  it('with recording off, gets a shell that is not recorded; turning it off is in the audit log', async () => {
    await putSettings({ device_recording: false });
    try {
      const audit = await s.app.inject({ method: 'GET', url: '/api/v1/audit?limit=20', headers: bearer(admin) });
      expect(audit.body).toContain('device_recording=false');
      const shell = await openShell(agent.id, writer);
      const id = await shell.sessionId;
      type(shell.ws, 'echo $((6*7))\r');
      await vi.waitFor(() => expect(shell.output()).toMatch(/(^|\D)42\r?\n/), { timeout: 10_000 });
      type(shell.ws, 'exit\r');
      expect((await shell.closed).code).toBe(1000);
      const row = await ended(id);
      expect(row).toMatchObject({ end_reason: 'exited', recording_sha256: null });
      expect((await s.app.inject({ method: 'GET', url: `/api/v1/device-sessions/${id}/recording`, headers: bearer(admin) })).statusCode).toBe(404);
    } finally {
      await putSettings({ device_recording: true });
    }
  });
});

describe('refused before the upgrade', () => {
  it('API keys of any permission, read users and foreign Origins: 403', async () => {
    for (const key of [keys.write, keys.admin]) {
      const res = await openShell(agent.id, 'x', '', apiKey(key)).catch((err: { status: number; body: string }) => err);
      expect(res).toMatchObject({ status: 403 });
    }
    expect(await refusal(agent.id, users.reader)).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect(await refusal(agent.id, writer, { origin: 'https://evil.example' })).toEqual({ status: 403, code: 'FORBIDDEN' });
  });

  it("a user of another customer: 404; an agent without the capability: 409 AGENT_UNSUPPORTED", async () => {
    expect(await refusal(agent.id, users.other)).toEqual({ status: 404, code: 'NOT_FOUND' });
    expect(await refusal(bare.id, writer)).toEqual({ status: 409, code: 'AGENT_UNSUPPORTED' });
  });

  it('an agent without its PTY library announces no shell', async () => {
    const key = (await createKey(s.app, bearer(admin), 'agent')).key;
    const noPty = await s.startAgent(key, { hostname: 'no-pty', loadPty: () => Promise.reject(new Error('Failed to load native module: pty.node')) });
    expect(noPty.agent.capabilities()).not.toContain('shell');
    expect(await refusal(noPty.id, users.writer)).toMatchObject({ status: 404 }); // no customer: outside the writer's
    expect(await refusal(noPty.id, admin)).toEqual({ status: 409, code: 'AGENT_UNSUPPORTED' });
  });
});
