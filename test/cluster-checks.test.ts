// Checks in cluster mode (issue 61), with real parts: two server processes on one PostgreSQL database and
// a nats-server of the test's own, a reference agent connected to instance a, and every policy, tag and
// query call made through instance b. b does not hold the agent, so what it changes reaches a only by
// the checks' revision (polled every five seconds); the agent's results are stored by a and read on b.
// Cluster mode needs PostgreSQL, so this runs in the PostgreSQL pass.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferenceAgent } from '../src/agent/reference-agent.js';
import { startClusterPair, type ClusterPair } from './helpers/cluster-instances.js';
import { clusterToolsSkip, freePort, startNats } from './helpers/cluster-rig.js';
import { testDbKind } from './helpers/db.js';
import { PROCESS_TEST_TIMEOUT_MS } from './helpers/spawn-server.js';

const rig = clusterToolsSkip('cluster mode: a policy changed on one instance reaches the agents of the other');
const POLL = { timeout: 30_000, interval: 500 };

describe.skipIf(testDbKind() !== 'postgres' || rig.skip)(rig.title, { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let c: ClusterPair;
  let onA: ReferenceAgent;
  let listener: net.Server;
  let openPort: number;
  let policyId: number;

  beforeAll(async () => {
    nats = await startNats();
    c = await startClusterPair(nats.url);
    listener = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    openPort = (listener.address() as net.AddressInfo).port;
    onA = await c.startAgent(c.a.url, 'checks-on-a');
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await c?.close();
    await nats?.stop();
    listener?.close();
  });

  const checksOnB = async () => (await c.call(c.b, 'GET', `/agents/${onA.agentId}/checks`)).json as { supported: boolean; checks: Array<{ name: string; state: string | null; params: { port: number } }> };

  it("runs a policy made on b, for a tag given on b, on the agent held by a, and shows its results on b", async () => {
    expect((await c.call(c.b, 'PATCH', `/agents/${onA.agentId}`, { tags: ['cluster-web'] })).status).toBe(200);
    const made = await c.call(c.b, 'POST', '/check-policies', {
      name: 'Cluster web',
      tags: ['cluster-web'],
      checks: [{ name: 'Port', kind: 'tcp', params: { host: '127.0.0.1', port: openPort }, interval_seconds: 10, timeout_seconds: 3 }],
    });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    policyId = made.json.id;
    await expect.poll(checksOnB, POLL).toMatchObject({ supported: true, checks: [{ name: 'Port', state: 'ok' }] });
    const status = (await c.call(c.a, 'GET', '/checks/status')).json as { agents_with_sets: number; received_results: number };
    expect(status.agents_with_sets).toBe(1);
    expect(status.received_results).toBeGreaterThan(0);
    // b holds no agent: it gave no set and stored nothing.
    expect((await c.call(c.b, 'GET', '/checks/status')).json).toMatchObject({ agents_with_sets: 0, received_results: 0 });
  });

  it('changes the check on b and the agent on a runs the new one: a closed port is CRITICAL in the failing view on b', async () => {
    const closed = await freePort();
    const policy = (await c.call(c.b, 'GET', `/check-policies/${policyId}`)).json as { name: string; tags: string[]; checks: Array<{ id: string; name: string; kind: string; params: object }> };
    const check = policy.checks[0]!;
    const changed = await c.call(c.b, 'PUT', `/check-policies/${policyId}`, {
      name: policy.name,
      tags: policy.tags,
      checks: [{ id: check.id, name: check.name, kind: 'tcp', params: { host: '127.0.0.1', port: closed }, interval_seconds: 10, timeout_seconds: 3 }],
    });
    expect(changed.status, JSON.stringify(changed.json)).toBe(200);
    await expect.poll(async () => (await c.call(c.b, 'GET', '/checks/failing')).json, POLL).toMatchObject([{ agent_id: onA.agentId, check_id: check.id, state: 'critical' }]);
    expect((await checksOnB()).checks[0]!.params.port).toBe(closed);
  });

  it('takes the checks away when b removes the tag', async () => {
    expect((await c.call(c.b, 'PATCH', `/agents/${onA.agentId}`, { tags: [] })).status).toBe(200);
    await expect.poll(checksOnB, POLL).toMatchObject({ checks: [] });
    // The agent's set went too, and with it its failing state.
    await expect.poll(async () => (await c.call(c.b, 'GET', '/checks/failing')).json, POLL).toEqual([]);
  });
});
