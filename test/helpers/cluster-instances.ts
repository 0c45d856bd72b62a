// Two RMM server processes in cluster mode on one PostgreSQL database and one NATS server, the way an
// operator runs them, with an admin key, an agent key, and reference agents pointed at either.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect, vi } from 'vitest';
import { ReferenceAgent } from '../../src/agent/reference-agent.js';
import { apiKey } from './identity.js';
import { createProcessDataPlace, messages, spawnServer, type ProcessDataPlace, type ServerProcess } from './spawn-server.js';

export interface Instance {
  id: string;
  proc: ServerProcess;
  /** http://127.0.0.1:<port>/api/v1 */
  api: string;
  url: string;
}

export interface ClusterPair {
  place: ProcessDataPlace;
  /** The PostgreSQL database both instances use. */
  databaseUrl: string;
  a: Instance;
  b: Instance;
  adminKey: string;
  agentKey: string;
  /** Starts (or, after a kill, starts again) an instance with the pair's settings. */
  startInstance(id: string): Promise<Instance>;
  /** A reference agent against `serverUrl` (an instance's url, or the load balancer's). */
  startAgent(serverUrl: string, name: string): Promise<ReferenceAgent>;
  /** fetch against an instance's API with the admin key (JSON in and out). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- bodies of many shapes, each checked by the test's expectations
  call(instance: Instance, method: string, route: string, body?: unknown): Promise<{ status: number; json: any }>;
  /** The instance that logged that it leads the cluster last (undefined when none does). */
  leader(): Instance | undefined;
  close(): Promise<void>;
}

const ADMIN_PASSWORD = 'cluster-admin-password';
const LEADS = 'this instance now leads the cluster (runs the once-per-cluster work)';
const LEADS_NO_MORE = 'this instance no longer leads the cluster';

/** `env`: more settings for both instances (a short MONITOR_INTERVAL_SECONDS, say). */
export async function startClusterPair(natsUrl: string, env: Record<string, string> = {}): Promise<ClusterPair> {
  const place = await createProcessDataPlace();
  const agentDirs: string[] = [];
  const agents: ReferenceAgent[] = [];
  const instances = new Map<string, Instance>();
  const exited = new Set<ServerProcess>();
  const shared = {
    ...place.env,
    NATS_URL: natsUrl,
    ADVERTISE_ADDRESS: '127.0.0.1',
    JWT_SECRET: 'cluster-test-jwt-secret-0123456789abcdef',
    ENCRYPTION_KEY: 'cluster-test-encryption-key-0123456789ab',
    ADMIN_PASSWORD,
    ...env,
  };

  async function startInstance(id: string): Promise<Instance> {
    const dataDir = path.join(place.dataDir, id);
    await mkdir(dataDir, { recursive: true });
    const proc = spawnServer({ ...shared, DATA_DIR: dataDir, INSTANCE_ID: id });
    await proc.listening;
    const url = `http://127.0.0.1:${proc.port}`;
    const instance = { id, proc, url, api: `${url}/api/v1` };
    instances.set(id, instance);
    void proc.exited.then(() => exited.add(proc));
    return instance;
  }

  async function call(instance: Instance, method: string, route: string, body?: unknown, key = adminKey) {
    const res = await fetch(`${instance.api}${route}`, {
      method,
      headers: { ...apiKey(key), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : null };
  }

  // One after the other: the first start creates the admin user.
  const a = await startInstance('a');
  const b = await startInstance('b');
  const login = await fetch(`${a.api}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
  });
  const { token } = (await login.json()) as { token: string };
  const createKey = async (permissions: string) => {
    const res = await fetch(`${b.api}/apikeys`, {
      method: 'POST',
      // A token signed by one instance is good on the other (the same JWT_SECRET).
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `cluster ${permissions}`, permissions }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { key: string }).key;
  };
  const adminKey = await createKey('admin');
  const agentKey = await createKey('agent');

  return {
    place,
    databaseUrl: place.env.DATABASE_URL!,
    a,
    b,
    adminKey,
    agentKey,
    startInstance,
    call: (instance, method, route, body) => call(instance, method, route, body),
    async startAgent(serverUrl, name) {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-cluster-agent-'));
      agentDirs.push(dir);
      const agent = new ReferenceAgent({
        serverUrl,
        apiKey: agentKey,
        stateFile: path.join(dir, 'state.json'),
        platform: 'linux',
        hostname: name,
        name,
        heartbeatIntervalMs: 3_600_000,
        collectSystem: () => ({ cpu: { usage_percent: 3 } }),
        backoff: { initialMs: 100, maxMs: 1000 },
      });
      agents.push(agent);
      await agent.start();
      await vi.waitFor(() => expect(agent.connected).toBe(true), { timeout: 15_000 });
      return agent;
    },
    leader() {
      return [...instances.values()].find((instance) => {
        if (exited.has(instance.proc)) return false;
        const lines = messages(instance.proc);
        return lines.lastIndexOf(LEADS) > lines.lastIndexOf(LEADS_NO_MORE);
      });
    },
    async close() {
      await Promise.all(agents.map((agent) => agent.stop()));
      for (const instance of instances.values()) instance.proc.kill('SIGTERM');
      await Promise.all([...instances.values()].map((i) => i.proc.exited));
      await Promise.all(agentDirs.map((dir) => rm(dir, { recursive: true, force: true })));
      await place.cleanup();
    },
  };
}
