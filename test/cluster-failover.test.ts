// Losing an instance under load (issue 32, acceptance 2): 200 agents behind HAProxy heartbeat every 1–2 s
// and hold their sockets, spread over two instances; the leader is killed with SIGKILL. Every agent must be
// back on the survivor within 30 s, no acknowledged heartbeat missing, exactly one `disconnected` event for
// each agent the dead instance held (none for the others), and the once-per-cluster work carries on on the
// survivor: a task due during the failover runs exactly once, and the status monitor keeps writing events.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgres, type DbHandle } from '../src/db/create-db.js';
import { createLogger } from '../src/platform/logger.js';
import { startClusterPair, type ClusterPair } from './helpers/cluster-instances.js';
import { clusterToolsSkip, startHaproxy, startNats, type HaproxyProcess, type NatsProcess } from './helpers/cluster-rig.js';
import { testDbKind } from './helpers/db.js';
import { HeartbeatLoad } from './helpers/heartbeat-load.js';

const AGENTS = 200;
const rig = clusterToolsSkip('an instance killed under load: its agents move to the survivor, nothing acknowledged is lost');

describe.skipIf(testDbKind() !== 'postgres' || rig.skip)(rig.title, { timeout: 300_000 }, () => {
  let nats: NatsProcess;
  let haproxy: HaproxyProcess;
  let c: ClusterPair;
  let load: HeartbeatLoad | undefined;
  let db: DbHandle;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-failover-'));
    nats = await startNats();
    c = await startClusterPair(nats.url, { MONITOR_INTERVAL_SECONDS: '2' });
    db = openPostgres(c.databaseUrl, createLogger({ level: 'silent' }));
    haproxy = await startHaproxy([
      { name: 'rmm-a', port: c.a.proc.port },
      { name: 'rmm-b', port: c.b.proc.port },
    ]);
    await vi.waitFor(async () => expect((await haproxy.serverStates()).every((s) => s.status === 'UP')).toBe(true), { timeout: 15_000 });
  }, 120_000);
  afterAll(async () => {
    await load?.close();
    await c?.close();
    await haproxy?.stop();
    await nats?.stop();
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('moves every agent to the survivor within 30 s and keeps every acknowledged heartbeat and the leader\'s work', async () => {
    const beats = (load = await HeartbeatLoad.connect(haproxy.url, c.agentKey, AGENTS, { reconnect: true }));
    beats.start();
    const worker = await c.startAgent(haproxy.url, 'task-worker');
    const started = performance.now();
    await vi.waitFor(() => expect(beats.allAckedSince(started)).toBe(true), { timeout: 60_000, interval: 500 });

    const leader = c.leader()!;
    expect(leader).toBeDefined();
    const survivor = leader === c.a ? c.b : c.a;
    const status = (await c.call(survivor, 'GET', '/hub/status')).json as { agents: Array<{ agent_id: string; instance_id: string }> };
    const onLeader = new Set(status.agents.filter((a) => a.instance_id === leader.id).map((a) => a.agent_id));
    // HAProxy spread them (leastconn): the dead instance takes a share of the fleet with it.
    expect(onLeader.size).toBeGreaterThan(AGENTS / 5);

    // A task due while the leader is gone: the survivor's scheduler must run it, once.
    const marker = path.join(dir, 'task-ran');
    const task = await c.call(survivor, 'POST', '/tasks', {
      agent_id: worker.agentId,
      kind: 'exec',
      name: 'due during the failover',
      params: { command: `echo ran >> ${marker}`, timeout: 30 },
      run_at: new Date(Date.now() + 3_000).toISOString(),
    });
    expect(task.status, JSON.stringify(task.json)).toBe(201);

    leader.proc.kill('SIGKILL');
    await leader.proc.exited;
    const killed = performance.now();
    // Back within 30 s of the kill: every socket open again, and the survivor holds every agent.
    await vi.waitFor(
      async () => {
        expect(beats.agents.filter((a) => a.closedWith !== undefined)).toEqual([]);
        const now = (await c.call(survivor, 'GET', '/hub/status')).json as { agents: unknown[] };
        expect(now.agents).toHaveLength(AGENTS + 1);
      },
      { timeout: Math.max(1_000, 30_000 - (performance.now() - killed)), interval: 250 },
    );
    expect(beats.agents.filter((a) => onLeader.has(a.id)).every((a) => a.reconnects >= 1)).toBe(true);
    const back = performance.now();
    await vi.waitFor(() => expect(beats.allAckedSince(back)).toBe(true), { timeout: 60_000, interval: 500 });

    // The task ran exactly once, on the survivor's watch.
    await vi.waitFor(async () => expect((await c.call(survivor, 'GET', `/tasks/${task.json.id}/runs`)).json.map((r: { status: string }) => r.status)).toEqual(['completed']), {
      timeout: 60_000,
      interval: 500,
    });
    expect(await readFile(marker, 'utf8')).toBe('ran\n');

    // The status monitor runs on the survivor: an agent silent for 10 minutes gets its `offline` event.
    const silent = 'f'.repeat(32);
    await sql`insert into agents (id, name, hostname, created_at, last_heartbeat, last_status)
      values (${silent}, 'fw-silent', 'fw-silent', now() - interval '1 hour', now() - interval '10 minutes', 'online')`.execute(db.db);
    await vi.waitFor(async () => expect((await c.call(survivor, 'GET', `/agents/${silent}/events`)).json.map((e: { type: string }) => e.type)).toEqual(['offline']), {
      timeout: 20_000,
      interval: 500,
    });

    await beats.stop();
    // No acknowledged heartbeat is missing: each one's number is among its agent's uptime samples.
    const lost: string[] = [];
    for (const agent of beats.agents) {
      const samples = (await c.call(survivor, 'GET', `/agents/${agent.id}/metrics?metric=uptime_seconds&limit=100000`)).json as Array<{ value: number }>;
      const values = new Set(samples.map((s) => s.value));
      for (const seq of agent.acked) if (!values.has(seq)) lost.push(`${agent.id} #${seq}`);
    }
    expect(lost).toEqual([]);

    // Exactly one `disconnected` per agent the dead instance held, written by the survivor; none for the rest.
    const { rows } = await sql<{ agent_id: string; n: number }>`
      select agent_id, count(*)::int as n from agent_events where type = 'disconnected' group by agent_id`.execute(db.db);
    const counts = new Map(rows.map((r) => [r.agent_id, r.n]));
    await vi.waitFor(async () => {
      const { rows: now } = await sql<{ agent_id: string; n: number }>`
        select agent_id, count(*)::int as n from agent_events where type = 'disconnected' group by agent_id`.execute(db.db);
      for (const r of now) counts.set(r.agent_id, r.n);
      expect(beats.agents.filter((a) => onLeader.has(a.id)).every((a) => counts.get(a.id) === 1)).toBe(true);
    }, { timeout: 30_000, interval: 1_000 });
    expect(beats.agents.filter((a) => !onLeader.has(a.id) && counts.has(a.id))).toEqual([]);
    expect(beats.agents.filter((a) => (counts.get(a.id) ?? 0) > 1)).toEqual([]);
  });
});
