// Agent traffic at the production log level: no line per heartbeat, one summary a minute (here: on
// close); at debug the per-request lines are back. People's requests keep their lines at info.
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureText } from './helpers/fixtures.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';

interface Line {
  level: number;
  msg: string;
  req?: { url: string };
  agent_traffic?: { agent_requests: number; heartbeats: number; p50_ms: number; p99_ms: number; client_errors: number; server_errors: number };
}
const INFO = 30;
const DEBUG = 20;

const apps: TestApp[] = [];
afterAll(() => Promise.all(apps.map((t) => t.close().catch(() => undefined))));

/** A server with one registered agent; sends `beats` heartbeats and one for an unknown agent. */
async function serverWithTraffic(logLevel: 'info' | 'debug', beats: number) {
  const t = await buildTestApp({ captureLogs: true, logLevel });
  apps.push(t);
  const token = await adminToken(t);
  const key = (await createKey(t.app, bearer(token), 'agent')).key;
  const body = JSON.parse(fixtureText('heartbeat-linux.json')) as Record<string, unknown>;
  const agentId = 'a0a0a0a0a0a0a0a0';
  const reg = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { agent_id: agentId, hostname: 'h1', platform: 'linux' } });
  expect(reg.statusCode, reg.body).toBe(200);
  for (let i = 0; i < beats; i += 1) {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(key), payload: { ...body, agent_id: agentId } });
    expect(res.statusCode, res.body).toBe(200);
  }
  const unknown = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(key), payload: { ...body, agent_id: 'b1b1b1b1b1b1b1b1' } });
  expect(unknown.statusCode).toBe(404);
  const people = await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: bearer(token) });
  expect(people.statusCode).toBe(200);
  return t;
}

const parsed = (t: TestApp) => t.logs().map((l) => JSON.parse(l) as Line);
const agentLines = (lines: Line[]) => lines.filter((l) => l.req?.url.startsWith('/api/v1/agent/'));

describe('agent traffic in the log', () => {
  it('at info: no per-request lines for agents, a summary with the counts, people\'s requests as before', async () => {
    const t = await serverWithTraffic('info', 5);
    expect(agentLines(parsed(t))).toEqual([]);
    expect(parsed(t).some((l) => l.req?.url === '/api/v1/customers' && l.level === INFO)).toBe(true);

    await t.close();
    const summaries = parsed(t).filter((l) => l.agent_traffic);
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.level).toBe(INFO);
    expect(summaries[0]!.agent_traffic).toMatchObject({ agent_requests: 7, heartbeats: 6, client_errors: 1, server_errors: 0 });
    expect(summaries[0]!.agent_traffic!.p99_ms).toBeGreaterThanOrEqual(summaries[0]!.agent_traffic!.p50_ms);
  });

  it('at debug: every agent request has its incoming and completed lines, at debug', async () => {
    const t = await serverWithTraffic('debug', 2);
    const lines = parsed(t).filter((l) => l.msg === 'incoming request' && l.req?.url.startsWith('/api/v1/agent/'));
    expect(lines.map((l) => l.req!.url)).toEqual(['/api/v1/agent/register', '/api/v1/agent/heartbeat', '/api/v1/agent/heartbeat', '/api/v1/agent/heartbeat']);
    expect(new Set(lines.map((l) => l.level))).toEqual(new Set([DEBUG]));
    expect(parsed(t).filter((l) => l.msg === 'request completed' && l.level === DEBUG)).toHaveLength(4);
  });
});
