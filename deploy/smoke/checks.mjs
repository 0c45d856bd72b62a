// What the smoke test asks of a running production install, as a user would: HTTP, the terminal's
// WebSocket, the reference agent's exec, a call start that switches a WLED light. Plain Node (20+: fetch
// is global); the WebSocket client is the `ws` package of the production folder itself.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';

/** Polls `attempt` until it gives a value; `process` (optional) ends the wait when it exits, saying how. */
export async function waitFor(what, attempt, { timeoutMs = 60_000, intervalMs = 250, process: watched } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    if (watched && !watched.running()) {
      await watched.exited;
      throw new Error(`${what}: the process ended (${watched.ending()})`);
    }
    try {
      const value = await attempt();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`${what}: not within ${timeoutMs / 1000} s${last ? ` (${last.message})` : ''}`);
}

export async function request(url, { method = 'GET', token, body, headers = {} } = {}) {
  const res = await fetch(url, {
    method,
    headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export function expectStatus(res, status, what) {
  if (res.status !== status) throw new Error(`${what}: HTTP ${res.status}, expected ${status}: ${res.text.slice(0, 300)}`);
  return res;
}

/** The console's page and the first script it loads. */
export async function checkConsole(base) {
  const page = expectStatus(await request(`${base}/`), 200, 'GET /');
  if (!/<div id="root">/.test(page.text)) throw new Error('GET / is not the console page');
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.text)?.[1];
  if (!script) throw new Error('the console page names no script');
  const js = expectStatus(await request(`${base}${script}`), 200, `GET ${script}`);
  if (!/javascript/.test(js.headers.get('content-type') ?? '')) throw new Error(`${script} is served as ${js.headers.get('content-type')}`);
  return `${script} (${js.text.length} bytes)`;
}

/** A web-terminal session that runs `echo` and sees the answer. */
export async function checkTerminal(appDir, base, token) {
  const WebSocket = createRequire(path.join(appDir, 'package.json'))('ws');
  const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/api/v1/terminal?token=${encodeURIComponent(token)}&cols=100&rows=30`);
  let output = '';
  ws.on('message', (data) => (output += data.toString('utf8')));
  try {
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`the terminal refused the upgrade: HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    });
    ws.send(Buffer.from('echo smoke-$((6*7)) $(id -un)\n'));
    return await waitFor('the shell answering echo', () => /smoke-42 (\S+)/.exec(output)?.[0], { timeoutMs: 15_000 });
  } finally {
    ws.close();
  }
}

/** A small WLED light: records each state it is sent, and answers the effect list. */
export function startWled() {
  const states = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/json/state') states.push(JSON.parse(body || '{}'));
      res.setHeader('content-type', 'application/json');
      res.end(req.url === '/json/eff' ? '["Solid"]' : '{"success":true}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ host: `127.0.0.1:${server.address().port}`, states, close: () => server.close() })));
}

/** A user at a light, present; a call start answers OK and turns the user's segment the call color. */
export async function checkCallStart(base, adminToken, wled) {
  const admin = (url, body) => request(`${base}/api/admin/${url}`, { method: 'POST', token: adminToken, body }).then((res) => expectStatus(res, 201, `POST /api/admin/${url}`).json);
  await admin('colors', { status_key: 'phone_active', r: 255, g: 0, b: 0 });
  const device = await admin('devices', { name: 'smoke light', hostname: wled.host });
  const user = await admin('users', { directory_id: 'smoke-1', display_name: 'Smoke Tester', extension: '4711', personal_nr: '0815', active: true });
  await admin('assignments', { user_id: user.id, device_id: device.id, segment: 0 });
  expectStatus(await request(`${base}/api/attendance/0815`, { method: 'POST', body: { status: 'anwesend' } }), 200, 'POST /api/attendance/0815');
  const answer = expectStatus(await request(`${base}/4711/callstart`), 200, 'GET /4711/callstart').text;
  if (!answer.startsWith('OK:')) throw new Error(`call start answered ${JSON.stringify(answer)}`);
  await waitFor('the light turning red', () => wled.states.some((s) => JSON.stringify(s.seg?.[0]?.col) === '[[255,0,0]]'), { timeoutMs: 10_000 });
  return answer.trim();
}
