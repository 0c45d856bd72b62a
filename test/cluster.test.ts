// Cluster mode (issue 32) with real parts: two server processes on one PostgreSQL database, a real
// nats-server of the test's own (so it can be killed), and reference agents on real sockets. Cluster
// mode needs PostgreSQL, so this runs in the PostgreSQL pass.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import type { ReferenceAgent } from '../src/agent/reference-agent.js';
import { startClusterPair, type ClusterPair } from './helpers/cluster-instances.js';
import { startNats } from './helpers/cluster-rig.js';
import { testDbKind } from './helpers/db.js';
import { apiKey } from './helpers/identity.js';
import { PROCESS_TEST_TIMEOUT_MS } from './helpers/spawn-server.js';

describe.skipIf(testDbKind() !== 'postgres')('cluster mode: two instances, one database, NATS between them', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let nats: Awaited<ReturnType<typeof startNats>>;
  let c: ClusterPair;
  let onA: ReferenceAgent;
  let onB: ReferenceAgent;

  beforeAll(async () => {
    nats = await startNats();
    c = await startClusterPair(nats.url);
    [onA, onB] = await Promise.all([c.startAgent(c.a, 'fw-on-a'), c.startAgent(c.b, 'pve-on-b')]);
  }, PROCESS_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await c?.close();
    await nats?.stop();
  });

  const exec = (via: ClusterPair['a'], agent: ReferenceAgent, command: string) => c.call(via, 'POST', `/agents/${agent.agentId}/exec`, { command });

  it('carries a command posted through either instance to an agent connected to the other, large answers included', async () => {
    const viaB = await exec(c.b, onA, 'echo from-a');
    expect(viaB.status, JSON.stringify(viaB.json)).toBe(200);
    expect(viaB.json).toMatchObject({ exit_code: 0, stdout: 'from-a\n' });
    const viaA = await exec(c.a, onB, 'echo from-b');
    expect(viaA.json).toMatchObject({ exit_code: 0, stdout: 'from-b\n' });
    // 400 KB of output: more than a bus message should carry, so it goes through the database.
    const big = await exec(c.b, onA, "head -c 400000 /dev/zero | tr '\\0' x");
    expect(big.status).toBe(200);
    expect(big.json.stdout).toBe('x'.repeat(400_000));
    // The agent's own failure comes back as it would on one instance.
    const failed = await c.call(c.b, 'POST', `/agents/${onA.agentId}/exec`, { command: 'sleep 5', timeout: 1 });
    expect(failed.json).toMatchObject({ timed_out: true });
    // Both instances call the agents connected.
    for (const via of [c.a, c.b]) {
      for (const agent of [onA, onB]) expect((await c.call(via, 'GET', `/agents/${agent.agentId}`)).json.connected).toBe(true);
    }
  });

  it('downloads through one instance a firmware uploaded through the other', async () => {
    const binary = randomBytes(3 * 1024 * 1024 + 17);
    const up = await fetch(`${c.a.api}/firmware/upload?version=7.1.0&platform=freebsd`, {
      method: 'POST',
      headers: { ...apiKey(c.adminKey), 'content-type': 'application/octet-stream' },
      body: binary,
    });
    expect(up.status, await up.clone().text()).toBe(201);
    const down = await fetch(`${c.b.api}/firmware/download?platform=freebsd&version=7.1.0`, { headers: apiKey(c.agentKey) });
    expect(down.status).toBe(200);
    expect(Buffer.from(await down.arrayBuffer()).equals(binary)).toBe(true);
  });

  it('judges metric thresholds on the leader, whichever instance took the heartbeats', async () => {
    const leader = await vi.waitFor(() => {
      expect(c.leader()).toBeDefined();
      return c.leader()!;
    }, { timeout: 30_000 });
    const follower = leader === c.a ? c.b : c.a;
    const agent = leader === c.a ? onB : onA;
    // Made through the follower: the leader must hear of the new rule.
    const rule = await c.call(follower, 'POST', '/alert-rules', {
      name: 'CPU busy (cluster)',
      kind: 'metric_threshold',
      agent_id: agent.agentId,
      params: { metric: 'cpu_usage', operator: '>', threshold: 80, for_seconds: 0 },
    });
    expect(rule.status, JSON.stringify(rule.json)).toBe(201);
    const heartbeat = (cpu: number) =>
      fetch(`${follower.api}/agent/heartbeat`, {
        method: 'POST',
        headers: { ...apiKey(c.agentKey), 'content-type': 'application/json' },
        body: JSON.stringify({ agent_id: agent.agentId, platform: 'linux', cpu: { usage_percent: cpu } }),
      });
    await vi.waitFor(async () => {
      expect((await heartbeat(95)).status).toBe(200);
      const alerts = await c.call(c.a, 'GET', `/alerts?rule_id=${rule.json.id}`);
      expect(alerts.json.map((a: { agent_id: string; state: string }) => [a.agent_id, a.state])).toEqual([[agent.agentId, 'firing']]);
    }, { timeout: 20_000, interval: 1_000 });
    expect((await c.call(follower, 'DELETE', `/alert-rules/${rule.json.id}`)).status).toBe(200);
  });

  it('lists every agent and both instances in /hub/status, from either instance', async () => {
    for (const via of [c.a, c.b]) {
      const { json } = await c.call(via, 'GET', '/hub/status');
      expect(json.agents.map((a: { agent_id: string; instance_id: string }) => [a.agent_id, a.instance_id]).sort()).toEqual(
        [
          [onA.agentId, 'a'],
          [onB.agentId, 'b'],
        ].sort(),
      );
      expect(json.instances.map((i: { instance_id: string; reachable: boolean; agents: number }) => [i.instance_id, i.reachable, i.agents])).toEqual([
        ['a', true, 1],
        ['b', true, 1],
      ]);
    }
  });

  it('closes an older socket of the agent on the other instance with 4000, and a deleted agent\'s socket with 4004', async () => {
    const reg = await fetch(`${c.a.api}/agent/register`, {
      method: 'POST',
      headers: { ...apiKey(c.agentKey), 'content-type': 'application/json' },
      body: JSON.stringify({ hostname: 'fw-moving', platform: 'freebsd' }),
    });
    const { agent_id: id } = (await reg.json()) as { agent_id: string };
    const open = (instance: ClusterPair['a']) =>
      new Promise<{ closed: Promise<number> }>((resolve, reject) => {
        const ws = new WebSocket(`${instance.url.replace('http', 'ws')}/api/v1/agent/ws?agent_id=${id}`, { headers: apiKey(c.agentKey) });
        const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
        ws.on('error', reject);
        ws.on('open', () => resolve({ closed }));
      });
    const first = await open(c.a);
    await vi.waitFor(async () => expect((await c.call(c.b, 'GET', `/agents/${id}`)).json.connected).toBe(true));
    const second = await open(c.b);
    expect(await first.closed).toBe(4000);
    // Replaced, not disconnected: two connects and no disconnect, as on one instance.
    await sleep(500);
    const events = await c.call(c.a, 'GET', `/agents/${id}/events`);
    expect(events.json.map((e: { type: string }) => e.type)).toEqual(['connected', 'connected']);
    // Deleted through the instance that does not hold its socket.
    expect((await c.call(c.a, 'DELETE', `/agents/${id}`)).status).toBe(200);
    expect(await second.closed).toBe(4004);
  });

  it('keeps serving its own agents while NATS is down, answers 503 CLUSTER_UNAVAILABLE across, and recovers when NATS returns', async () => {
    await nats.kill();
    await vi.waitFor(async () => expect((await exec(c.a, onB, 'true')).status).toBe(503), { timeout: 20_000, interval: 500 });
    const across = await exec(c.a, onB, 'true');
    expect(across.json).toMatchObject({ code: 'CLUSTER_UNAVAILABLE' });
    expect((await exec(c.a, onA, 'echo still-here')).json).toMatchObject({ stdout: 'still-here\n' });
    expect((await exec(c.b, onB, 'echo still-here')).json).toMatchObject({ stdout: 'still-here\n' });
    await nats.restart();
    await vi.waitFor(async () => expect((await exec(c.a, onB, 'echo across-again')).json).toMatchObject({ stdout: 'across-again\n' }), { timeout: 30_000, interval: 500 });
    expect((await exec(c.b, onA, 'echo across-again')).json).toMatchObject({ stdout: 'across-again\n' });
  });

  it('hands the once-per-cluster work to the survivor when the leader is killed, and records its agents disconnected once', async () => {
    await vi.waitFor(() => expect(c.leader()).toBeDefined(), { timeout: 30_000 });
    const leader = c.leader()!;
    const survivor = leader === c.a ? c.b : c.a;
    const stranded = leader === c.a ? onA : onB;
    // Its agent keeps trying the dead instance (no load balancer here to move it).
    const kept = leader === c.a ? onB : onA;
    leader.proc.kill('SIGKILL');
    await leader.proc.exited;
    await vi.waitFor(() => expect(c.leader()).toBe(survivor), { timeout: 30_000, interval: 500 });
    // The dead instance could not write it: the survivor's reaper does, once, then and after more rounds.
    const disconnects = async () =>
      (await c.call(survivor, 'GET', `/agents/${stranded.agentId}/events`)).json.filter((e: { type: string }) => e.type === 'disconnected').length;
    await vi.waitFor(async () => expect(await disconnects()).toBe(1), { timeout: 30_000, interval: 500 });
    await sleep(6_000);
    expect(await disconnects()).toBe(1);
    expect((await exec(survivor, kept, 'echo survivor')).json).toMatchObject({ stdout: 'survivor\n' });
  });
});
