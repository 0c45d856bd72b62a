// Group commit must not let heartbeats that share a batch interfere: a key of another customer that
// names an agent in the same batch as the agent's own heartbeat neither displaces the genuine heartbeat
// nor learns that the agent exists.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeartbeatWriter, type HeartbeatInput } from '../src/modules/agents/heartbeat-writer.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

let t: TestApp;
let customerA: number;
let customerB: number;
let agentOfA: string;
let otherAgent: string;

async function register(key: string, hostname: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname, platform: 'freebsd' } });
  return (res.json() as { agent_id: string }).agent_id;
}

beforeAll(async () => {
  t = await buildTestApp();
  const token = await adminToken(t);
  customerA = (await createCustomer(t.app, token, 'A-1')).id;
  customerB = (await createCustomer(t.app, token, 'B-1')).id;
  agentOfA = await register((await createKey(t.app, bearer(token), 'agent', customerA)).key, 'fw-a');
  otherAgent = await register((await createKey(t.app, bearer(token), 'agent')).key, 'fw-x');
});
afterAll(() => t.close());

const heartbeat = (agentId: string, scope: number | null, raw: string): HeartbeatInput => ({
  agentId,
  platform: 'freebsd',
  hostname: null,
  agentVersion: null,
  agentSha256: null,
  raw: Buffer.from(raw),
  parsed: JSON.parse(raw) as Record<string, unknown>,
  keyHint: null,
  scope: scope === null ? null : [scope],
  receivedAt: new Date(),
});

describe('heartbeats sharing a batch', () => {
  it("keep a foreign key's heartbeat from displacing or confirming the genuine one", async () => {
    const writer = new HeartbeatWriter(t.db.db);
    // The first write occupies the lane; the next two queue up and are written together as one batch.
    const first = writer.write(heartbeat(otherAgent, null, '{"n":0}'));
    const genuine = writer.write(heartbeat(agentOfA, customerA, '{"from":"A"}'));
    const intruder = writer.write(heartbeat(agentOfA, customerB, '{"from":"B"}'));
    await first;
    expect(await genuine).toEqual({ found: true, updateRequested: false });
    expect(await intruder).toEqual({ found: false, updateRequested: false });
    const row = await t.db.db.selectFrom('agents').select('system').where('id', '=', agentOfA).executeTakeFirstOrThrow();
    expect(row.system).toBe('{"from":"A"}');
  });
});
