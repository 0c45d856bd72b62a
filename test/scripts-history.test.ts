// The script library and the command history (issue 33, Build 3), against a reference agent that runs
// every exec for real over its socket: a saved sh or bash script with a parameter whose value is hostile
// text prints that text unchanged; every exec, ad hoc or scripted, is one history entry with who, when,
// exit code, duration and output (capped at 256 KiB, stored compressed unless short), searchable, per
// agent and fleet-wide, within the caller's scope.
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { renderScript } from '../src/modules/scripts/script-render.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

let s: LiveServer;
let admin: Record<string, string>;
let agent: LiveAgent;
let customer: number;
let otherWrite: string;

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object, headers = admin) =>
  s.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });

interface Entry {
  id: number;
  agent_name: string;
  source: string;
  actor: string;
  script_name: string | null;
  command: string;
  status: string;
  exit_code: number | null;
  error: string | null;
  duration_ms: number | null;
  output_bytes: number;
  output_truncated: boolean;
  output_preview: string;
  stdout?: string;
  stderr?: string;
}

const HOSTILE = `it's "$(touch /tmp/rmm-script-pwned)" \`id\` ; rm -rf / # ünïcode`;

beforeAll(async () => {
  s = await startLiveServer({ backgroundJobs: true }); // the task scheduler too
  const token = await adminToken(s);
  admin = bearer(token);
  customer = (await createCustomer(s.app, token, 'SC-1', 'Scripts GmbH')).id;
  const other = (await createCustomer(s.app, token, 'SC-2')).id;
  otherWrite = (await createKey(s.app, admin, 'write', other)).key;
  const agentKey = (await createKey(s.app, admin, 'agent', customer)).key;
  agent = await s.startAgent(agentKey, { name: 'script-host' });
});
afterAll(() => s.close());

async function saveScript(body: object): Promise<number> {
  const res = await call('POST', '/scripts', body);
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: number }).id;
}

describe('scripts', () => {
  it('runs a saved sh script with a parameter: the value arrives as data, never as code', async () => {
    const id = await saveScript({
      name: 'Say something',
      description: 'Prints GREETING and where it ran',
      shell: 'sh',
      body: 'printf "%s\\n" "$GREETING"\necho "on $(uname -s)" >&2\nexit 3',
      parameters: [{ name: 'GREETING', default: 'hello', description: 'What to print' }],
      platforms: ['linux', 'freebsd'],
    });
    const run = await call('POST', `/scripts/${id}/run`, { agent_id: agent.id, parameters: { GREETING: HOSTILE } });
    expect(run.statusCode, run.body).toBe(200);
    expect(run.json()).toMatchObject({ exit_code: 3, stdout: `${HOSTILE}\n`, stderr: 'on Linux\n', history_id: expect.any(Number) });
    const byDefault = await call('POST', `/scripts/${id}/run`, { agent_id: agent.id });
    expect(byDefault.json()).toMatchObject({ stdout: 'hello\n' });

    const history = (await call('GET', `/agents/${agent.id}/history`)).json() as Entry[];
    expect(history[1]).toMatchObject({ source: 'script', script_name: 'Say something', actor: 'admin', status: 'failed', exit_code: 3, agent_name: 'script-host' });
    expect(history[1]!.output_preview).toContain(HOSTILE);
    expect(history[1]!.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('runs a bash script, and refuses what cannot run: another platform, an unknown parameter, a scoped caller changing the library', async () => {
    const id = await saveScript({ name: 'Bash arrays', shell: 'bash', body: 'a=("$WORD" two); echo "${#a[@]} ${a[0]}"', parameters: [{ name: 'WORD', default: 'x' }], platforms: ['linux'] });
    const run = await call('POST', `/scripts/${id}/run`, { agent_id: agent.id, parameters: { WORD: "o'clock" } });
    expect(run.json()).toMatchObject({ exit_code: 0, stdout: "2 o'clock\n" });

    const windowsOnly = await saveScript({ name: 'Windows only', shell: 'powershell', body: 'Get-Date', platforms: ['windows'] });
    const before = ((await call('GET', `/agents/${agent.id}/history`)).json() as Entry[]).length;
    expectError(await call('POST', `/scripts/${windowsOnly}/run`, { agent_id: agent.id }), 409, 'CONFLICT');
    expectError(await call('POST', `/scripts/${id}/run`, { agent_id: agent.id, parameters: { NOPE: '1' } }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/scripts', { name: 'bash arrays', shell: 'sh', body: 'true', platforms: ['linux'] }), 409, 'CONFLICT');
    expectError(await call('POST', '/scripts', { name: 'x', shell: 'zsh', body: 'true', platforms: ['linux'] }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/scripts', { name: 'x', shell: 'sh', body: 'true', platforms: [], parameters: [] }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/scripts', { name: 'x', shell: 'sh', body: 'true', platforms: ['linux'], parameters: [{ name: '1abc' }] }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/scripts', { name: 'x', shell: 'sh', body: 'true', platforms: ['linux'] }, apiKey(otherWrite)), 403, 'FORBIDDEN');
    // Another customer's key reaches neither the agent nor its history.
    expectError(await call('POST', `/scripts/${id}/run`, { agent_id: agent.id }, apiKey(otherWrite)), 404, 'NOT_FOUND');
    expectError(await call('GET', `/agents/${agent.id}/history`, undefined, apiKey(otherWrite)), 404, 'NOT_FOUND');
    expect((await call('GET', '/history', undefined, apiKey(otherWrite))).json()).toEqual([]);
    expect(((await call('GET', `/agents/${agent.id}/history`)).json() as Entry[]).length).toBe(before);
  });

  it('renders parameters for PowerShell (encoded) and cmd (refusing values cmd cannot quote)', () => {
    const ps = renderScript('powershell', 'Write-Output $env:NAME', [['NAME', "O'Brien’s"]]);
    const encoded = /-EncodedCommand (\S+)$/.exec(ps)![1]!;
    expect(Buffer.from(encoded, 'base64').toString('utf16le')).toBe("$env:NAME = 'O''Brien’’s'\nWrite-Output $env:NAME");
    expect(renderScript('cmd', 'echo %NAME%\r\n\r\nver', [['NAME', 'a b']])).toBe('set "NAME=a b" & echo %NAME% & ver');
    expect(() => renderScript('cmd', 'echo %NAME%', [['NAME', 'a & del *']])).toThrow(/cannot hold/);
    expect(() => renderScript('sh', 'x'.repeat(10_001), [])).toThrow(/at most 10000/);
  });
});

describe('scripts as tasks', () => {
  it('a task of kind script runs the saved script with its parameters, and the history names the task', async () => {
    const id = await saveScript({ name: 'Task script', shell: 'sh', body: 'echo "task says $WHAT"', parameters: [{ name: 'WHAT', default: '?' }], platforms: ['linux'] });
    const made = await call('POST', '/tasks', { agent_id: agent.id, kind: 'script', name: 'nightly words', params: { script_id: id, parameters: { WHAT: 'hello' } } });
    expect(made.statusCode, made.body).toBe(201);
    const taskId = (made.json() as { id: number }).id;
    await vi.waitFor(async () => expect((await call('GET', `/tasks/${taskId}`)).json()).toMatchObject({ status: 'completed', result: { exit_code: 0, stdout: 'task says hello\n' } }), { timeout: 15_000, interval: 200 });
    const [entry] = (await call('GET', `/agents/${agent.id}/history?source=task`)).json() as Entry[];
    expect(entry).toMatchObject({ source: 'task', script_name: 'Task script', actor: `task ${taskId} (nightly words)`, exit_code: 0 });
    expectError(await call('POST', '/tasks', { agent_id: agent.id, kind: 'script', params: { parameters: {} } }), 400, 'VALIDATION_ERROR');
  });
});

describe('command history', () => {
  it('keeps ad hoc execs too, caps the output at 256 KiB compressed, and finds entries by their output', async () => {
    const res = await call('POST', `/agents/${agent.id}/exec`, { command: "head -c 400000 /dev/zero | tr '\\0' a; echo needle-4711 >&2" });
    expect(res.statusCode, res.body).toBe(200);
    const { history_id: id } = res.json() as { history_id: number };
    const entry = (await call('GET', `/history/${id}`)).json() as Entry;
    expect(entry).toMatchObject({ source: 'exec', status: 'completed', exit_code: 0, output_bytes: 400_012, output_truncated: true, stderr: 'needle-4711\n' });
    expect(Buffer.byteLength(entry.stdout!) + Buffer.byteLength(entry.stderr!)).toBe(256 * 1024);
    const stored = await s.db.db.selectFrom('command_history').select('output').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.output!.length).toBeLessThan(4096); // compressed
    expect(JSON.parse(gunzipSync(stored.output!).toString()).stderr).toBe('needle-4711\n');

    const found = (await call('GET', '/history?q=NEEDLE-4711')).json() as Entry[];
    expect(found.map((e) => e.id)).toEqual([id]);
    expect(((await call('GET', '/history?source=script')).json() as Entry[]).every((e) => e.source === 'script')).toBe(true);
    expect(((await call('GET', `/history?q=${encodeURIComponent('Say something')}`)).json() as Entry[]).length).toBe(2);
  });

  it('keeps a short output as it is, and still reads a short output an earlier version stored compressed', async () => {
    const res = await call('POST', `/agents/${agent.id}/exec`, { command: 'echo short-4712' });
    expect(res.statusCode, res.body).toBe(200);
    const { history_id: id } = res.json() as { history_id: number };
    expect((await call('GET', `/history/${id}`)).json()).toMatchObject({ stdout: 'short-4712\n', stderr: '', output_bytes: 11 });
    const row = () => s.db.db.selectFrom('command_history').select('output').where('id', '=', id).executeTakeFirstOrThrow();
    expect(Buffer.from((await row()).output!).toString('utf8')).toBe('{"stdout":"short-4712\\n","stderr":""}');

    // Until 2026-11-28 every output was stored gzip-compressed, however short.
    const gzipped = gzipSync(JSON.stringify({ stdout: 'older-4713\n', stderr: 'warn\n' }));
    await s.db.db.updateTable('command_history').set({ output: gzipped }).where('id', '=', id).execute();
    expect((await call('GET', `/history/${id}`)).json()).toMatchObject({ stdout: 'older-4713\n', stderr: 'warn\n' });
  });

  it('records an exec the agent could not run as an error, and pages newest first', async () => {
    const lone = await call('POST', '/agents', { name: 'never-connected', customer_id: customer });
    const loneId = (lone.json() as { id: string }).id;
    expectError(await call('POST', `/agents/${loneId}/exec`, { command: 'true' }), 409, 'AGENT_NOT_CONNECTED');
    const [entry] = (await call('GET', `/agents/${loneId}/history`)).json() as Entry[];
    expect(entry).toMatchObject({ status: 'error', error: expect.stringContaining('AGENT_NOT_CONNECTED'), exit_code: null });

    const first = await call('GET', '/history?limit=2');
    const page1 = first.json() as Entry[];
    expect(page1).toHaveLength(2);
    expect(page1[0]!.id).toBeGreaterThan(page1[1]!.id);
    const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))![1]!;
    const page2 = (await s.app.inject({ method: 'GET', url: next, headers: admin })).json() as Entry[];
    expect(page2[0]!.id).toBeLessThan(page1[1]!.id);
  });
});
