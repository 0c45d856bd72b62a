// The command history is written behind the answers (issue 36: src/modules/history/history-writer.ts):
// ids reserved ahead, rows batched and written after the exec's answer went out. What a technician must
// still see: a command in progress is listed at once, the answer's history_id names the finished entry,
// nothing is lost when many commands end together or the server stops right after answering, and one
// entry's odd text does not lose the entries written in its batch.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer, type RawPeer } from './helpers/live-agent.js';

let s: LiveServer;
let admin: Record<string, string>;
let agentId: string;
let peer: RawPeer;

interface Entry {
  id: number;
  command: string;
  status: string;
  exit_code: number | null;
  output_preview: string;
  stdout?: string | null;
}

beforeAll(async () => {
  s = await startLiveServer();
  admin = bearer(await adminToken(s));
  const key = (await createKey(s.app, admin, 'agent')).key;
  agentId = await s.register(key, 'history-host');
  peer = await s.openRaw(agentId, key);
});
afterAll(() => s.close());

const exec = (command: string) => s.app.inject({ method: 'POST', url: `/api/v1/agents/${agentId}/exec`, headers: admin, payload: { command, timeout: 30 } });
const get = async <T>(url: string) => (await s.app.inject({ method: 'GET', url: `/api/v1${url}`, headers: admin })).json() as T;
const answer = (id: string, data: object) => peer.ws.send(JSON.stringify({ type: 'response', id, success: true, data }));

it('lists a command while it runs, then completes the entry the answer names', async () => {
  const pending = exec('sleep 5; echo slow');
  const sent = await peer.nextCommand();
  // Read at once: well before the started row's own timer, the read writes it first.
  const running = await get<Entry[]>(`/agents/${agentId}/history`);
  expect(running.find((e) => e.command === 'sleep 5; echo slow')).toMatchObject({ status: 'running', exit_code: null });

  answer(sent.id, { exit_code: 0, stdout: 'slow\n', stderr: '' });
  const res = await pending;
  expect(res.statusCode, res.body).toBe(200);
  const { history_id: historyId } = res.json() as { history_id: number };
  expect(historyId).toBe(running.find((e) => e.command === 'sleep 5; echo slow')!.id);
  expect(await get<Entry>(`/history/${historyId}`)).toMatchObject({ status: 'completed', exit_code: 0, stdout: 'slow\n' });
});

it('keeps every one of 40 commands that end together, each under its own id', async () => {
  const replies = Promise.all(Array.from({ length: 40 }, (_, i) => exec(`echo burst-${i}`)));
  for (let i = 0; i < 40; i++) {
    const sent = await peer.nextCommand();
    answer(sent.id, { exit_code: 0, stdout: `${String(sent.params.command).replace('echo ', '')}\n`, stderr: '' });
  }
  const ids = (await replies).map((r) => (r.json() as { history_id: number }).history_id);
  expect(new Set(ids).size).toBe(40);
  const listed = await get<Entry[]>(`/agents/${agentId}/history?q=burst-&limit=100`);
  expect(listed.map((e) => e.id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
  expect(listed.every((e) => e.status === 'completed' && e.output_preview === `${e.command.replace('echo ', '')}\n`)).toBe(true);
});

it('stores an output with NUL and a lone surrogate as U+FFFD, and the entries written with it', async () => {
  const replies = Promise.all([exec('echo odd'), exec('echo plain')]);
  for (let i = 0; i < 2; i++) {
    const sent = await peer.nextCommand();
    const odd = String(sent.params.command) === 'echo odd';
    answer(sent.id, { exit_code: 0, stdout: odd ? 'a\u0000b\ud800c' : 'plain', stderr: '' });
  }
  const ids = (await replies).map((r) => (r.json() as { history_id: number }).history_id);
  const [odd, plain] = await Promise.all(ids.map((id) => get<Entry>(`/history/${id}`)));
  expect(odd).toMatchObject({ command: 'echo odd', status: 'completed', output_preview: 'a\ufffdb\ufffdc' });
  expect(plain).toMatchObject({ command: 'echo plain', status: 'completed', output_preview: 'plain' });
});

it('writes the entries of answered commands, and of one cut short by the stop, before the server has stopped', async () => {
  const replies = Promise.all(Array.from({ length: 10 }, (_, i) => exec(`echo last-${i}`)));
  for (let i = 0; i < 10; i++) {
    const sent = await peer.nextCommand();
    answer(sent.id, { exit_code: 0, stdout: 'bye', stderr: '' });
  }
  const ids = (await replies).map((r) => (r.json() as { history_id: number }).history_id);
  const unanswered = exec('sleep 600');
  await peer.nextCommand();
  await s.app.close(); // the database stays open: only the app's own shutdown may finish the writes
  expect((await unanswered).statusCode).toBeGreaterThanOrEqual(500);
  const rows = await s.db.db.selectFrom('command_history').select(['id', 'command', 'exit_code', 'error']).where((eb) => eb.or([eb('command', 'like', 'echo last-%'), eb('command', '=', 'sleep 600')])).execute();
  expect(rows.filter((r) => r.command !== 'sleep 600').map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
  expect(rows.filter((r) => r.command !== 'sleep 600').every((r) => r.exit_code === 0)).toBe(true);
  expect(rows.find((r) => r.command === 'sleep 600')).toMatchObject({ exit_code: null, error: expect.stringMatching(/^SERVICE_UNAVAILABLE: The server is shutting down/) as unknown });
});
