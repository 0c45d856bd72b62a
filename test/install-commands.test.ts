// Onboarding (issue 33, Build 1): the install command made for a pre-registered agent runs through a
// real shell against a real server socket; the script downloads the agent binary (the reference agent's
// launcher, uploaded as Linux firmware), and the agent it starts adopts the pre-registered record with its
// customer. Enrollment keys stop after their uses or their time with 401; agents they installed keep
// working because the script gives them the customer's installer key, not the enrollment key.
import { readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { InstallRuns, uploadLauncherFirmware } from './helpers/install-run.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';


let s: LiveServer;
let admin: Record<string, string>;
let customer: number;
const installs = new InstallRuns();

interface Commands {
  server_url: string;
  agent_name: string | null;
  customer_id: number | null;
  key: { id: number; key: string; expires_at: string | null; max_uses: number | null; uses: number; expired: boolean; customer_id: number | null };
  commands: Array<{ platform: string; shell: string; command: string; problem: string | null }>;
}

const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, headers = admin) => s.app.inject({ method, url: `/api/v1${url}`, headers, ...(payload ? { payload } : {}) });

async function preRegister(name: string): Promise<string> {
  const res = await call('POST', '/agents', { name, customer_id: customer });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { id: string }).id;
}

async function makeCommands(body: object): Promise<Commands> {
  const res = await call('POST', '/install-commands', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as Commands;
}

beforeAll(async () => {
  s = await startLiveServer({});
  const token = await adminToken(s);
  admin = bearer(token);
  customer = (await createCustomer(s.app, token, 'ON-1', 'Onboarding GmbH')).id;
  await uploadLauncherFirmware(s.url, admin);
});

afterAll(async () => {
  await installs.stopAll();
  await s.close();
});

describe('install commands', () => {
  it('need backend_url: 409, and no key is made', async () => {
    const id = await preRegister('before-url');
    const res = await call('POST', '/install-commands', { agent_id: id });
    expectError(res, 409, 'BACKEND_URL_UNSET');
    expect(res.json()).toMatchObject({ error: expect.stringMatching(/^Set this server's address for devices first \(Settings, Backend URL/) });
    const keys = (await call('GET', '/apikeys')).json() as unknown[];
    expect(keys).toEqual([]);
    const set = await call('PUT', '/settings', { backend_url: `${s.url}/` });
    expect(set.statusCode, set.body).toBe(200);
  });

  it('installs a pre-registered agent through a shell: it registers with its customer and keeps working after the enrollment key expired', async () => {
    // A name that would break naive quoting: the agent must adopt exactly this record.
    const name = `fw-O'Brien $(touch /tmp/rmm-pwned) "x"`;
    const id = await preRegister(name);
    const made = await makeCommands({ agent_id: id, expires_in_days: 7, max_uses: 1 });
    expect(made).toMatchObject({ server_url: s.url, agent_name: name, customer_id: customer });
    expect(made.key).toMatchObject({ customer_id: customer, max_uses: 1, uses: 0, expired: false });
    expect(new Date(made.key.expires_at!).getTime()).toBeGreaterThan(Date.now() + 6.9 * 86_400_000);
    const linux = made.commands.find((c) => c.platform === 'linux')!;
    expect(linux).toMatchObject({ shell: 'sh', problem: null });
    expect(linux.command).toContain(made.key.key);
    expect(made.commands.find((c) => c.platform === 'windows')!.problem).toMatch(/installer package/);
    expect(made.commands.find((c) => c.platform === 'freebsd')!.problem).toMatch(/firmware\) for freebsd/);

    const { dir, stdout } = await installs.run(linux.command);
    expect(stdout).toContain('the agent runs in the background');
    await vi.waitFor(
      async () => {
        const agent = (await call('GET', `/agents/${id}`)).json() as { hostname: string; status: string; customer_id: number; name: string };
        expect(agent).toMatchObject({ name, customer_id: customer, status: 'online' });
        expect(agent.hostname).not.toBe('(ausstehend)');
      },
      { timeout: 30_000, interval: 250 },
    );
    await expect(stat('/tmp/rmm-pwned')).rejects.toThrow();

    // Settings readable by the installing user only, holding the customer's installer key, not the enrollment key.
    const envFile = path.join(dir, 'rmm-agent.env');
    expect((await stat(envFile)).mode & 0o777).toBe(0o600);
    const settings = await readFile(envFile, 'utf8');
    expect(settings).not.toContain(made.key.key);
    const hint = ((await call('GET', `/customers/${customer}/installer-key`)).json() as { key_hint: string }).key_hint;
    const installed = /RMM_AGENT_KEY='([^']+)'/.exec(settings)![1]!;
    expect(`${installed.slice(0, 8)}…${installed.slice(-4)}`).toBe(hint);

    // One use, its only one: the key is used up everywhere, listed as expired, and the agent is unaffected.
    const listed = ((await call('GET', '/apikeys')).json() as Array<{ id: number; uses: number; expired: boolean }>).find((k) => k.id === made.key.id);
    expect(listed).toMatchObject({ uses: 1, expired: true });
    const again = await s.app.inject({ method: 'GET', url: '/api/v1/install/agent.sh?platform=linux', headers: apiKey(made.key.key) });
    expectError(again, 401, 'UNAUTHORIZED');
    expect(again.json()).toMatchObject({ error: 'API key used up (1 of 1 uses)' });
    const heartbeat = await s.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(made.key.key), payload: { agent_id: id, platform: 'linux' } });
    expectError(heartbeat, 401, 'UNAUTHORIZED');
    // The installed agent still answers over its socket: it signed in with the installer key.
    const check = await s.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/update-check`, headers: admin, payload: {} });
    expect(check.statusCode, check.body).toBe(200);
    expect(((await call('GET', `/agents/${id}`)).json() as { status: string }).status).toBe('online');
  });

  it('a customer install command without an agent names none: the device registers under its hostname', async () => {
    const made = await makeCommands({ customer_id: customer });
    expect(made).toMatchObject({ agent_name: null, customer_id: customer });
    expect(made.key).toMatchObject({ expires_at: null, max_uses: null });
    const script = await s.app.inject({ method: 'GET', url: '/api/v1/install/agent.sh?platform=linux', headers: apiKey(made.key.key) });
    expect(script.statusCode, script.body).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/x-shellscript/);
    expect(script.headers['cache-control']).toBe('no-store');
    await installs.run(made.commands.find((c) => c.platform === 'linux')!.command);
    await vi.waitFor(
      async () => {
        const agents = (await call('GET', `/customers/${customer}/agents`)).json() as Array<{ name: string; hostname: string; status: string }>;
        expect(agents).toContainEqual(expect.objectContaining({ name: os.hostname(), hostname: os.hostname(), status: 'online' }));
      },
      { timeout: 30_000, interval: 250 },
    );
    const listed = ((await call('GET', '/apikeys')).json() as Array<{ id: number; uses: number; expired: boolean }>).find((k) => k.id === made.key.id);
    expect(listed).toMatchObject({ uses: 2, expired: false });
  });
});

describe('enrollment keys', () => {
  it('an enrollment key past its expiry answers 401 everywhere and is listed as expired', async () => {
    const { key, id } = (await call('POST', '/apikeys', { name: 'short', permissions: 'agent', customer_id: customer, expires_at: new Date(Date.now() + 1500).toISOString() })).json() as {
      key: string;
      id: number;
    };
    const before = await s.app.inject({ method: 'GET', url: '/api/v1/install/agent.sh?platform=linux', headers: apiKey(key) });
    expect(before.statusCode, before.body).toBe(200);
    await sleep(1600);
    for (const url of ['/api/v1/install/agent.sh?platform=linux', `/api/v1/customers/${customer}/wau/included`]) {
      const res = await s.app.inject({ method: 'GET', url, headers: apiKey(key) });
      expectError(res, 401, 'UNAUTHORIZED');
      expect(res.json()).toMatchObject({ error: expect.stringMatching(/^API key expired at /) });
    }
    const listed = ((await call('GET', '/apikeys')).json() as Array<{ id: number; expired: boolean; uses: number }>).find((k) => k.id === id);
    expect(listed).toMatchObject({ expired: true, uses: 1 });
  });

  it('refuses hostile and impossible requests with the contract error body, making nothing', async () => {
    const count = async () => ((await call('GET', '/apikeys')).json() as unknown[]).length;
    const keysBefore = await count();
    expectError(await call('POST', '/apikeys', { name: 'past', permissions: 'agent', expires_at: '2020-01-01T00:00:00Z' }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/apikeys', { name: 'zero', permissions: 'agent', max_uses: 0 }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/install-commands', { customer_id: customer, expires_in_days: 0 }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/install-commands', { customer_id: customer, surprise: 1 }), 400, 'VALIDATION_ERROR');
    expectError(await call('POST', '/install-commands', { customer_id: 999_999 }), 404, 'NOT_FOUND');
    // An agent without a customer installs with installer_api_key, which is not set.
    const lone = await call('POST', '/agents', { name: 'no-customer' });
    expectError(await call('POST', '/install-commands', { agent_id: (lone.json() as { id: string }).id }), 409, 'CONFLICT');
    // A customer-scoped key reaches no other customer's agents.
    const other = (await createCustomer(s.app, admin.authorization!.slice(7), 'ON-2')).id;
    const otherWrite = (await createKey(s.app, admin, 'write', other)).key;
    const mine = await preRegister('scoped-target');
    expectError(await call('POST', '/install-commands', { agent_id: mine }, apiKey(otherWrite)), 404, 'NOT_FOUND');
    expect(await count()).toBe(keysBefore + 1); // only otherWrite
    // A name that could end a line of the script is refused before anything is counted.
    const agentKey = (await createKey(s.app, admin, 'agent', customer)).key;
    expectError(await s.app.inject({ method: 'GET', url: `/api/v1/install/agent.sh?platform=linux&name=${encodeURIComponent('a\nb')}`, headers: apiKey(agentKey) }), 400, 'VALIDATION_ERROR');
    // An unscoped key has no customer's installer key to hand out, and installer_api_key is not set.
    const unscoped = (await createKey(s.app, admin, 'agent')).key;
    expectError(await s.app.inject({ method: 'GET', url: '/api/v1/install/agent.sh?platform=linux', headers: apiKey(unscoped) }), 409, 'CONFLICT');
    expectError(await s.app.inject({ method: 'GET', url: '/api/v1/install/agent.sh?platform=freebsd', headers: apiKey(agentKey) }), 409, 'CONFLICT');
    const uses = ((await call('GET', '/apikeys')).json() as Array<{ key_hint: string; uses: number }>).filter((k) => k.uses > 0 && [agentKey, unscoped].some((key) => k.key_hint.startsWith(key.slice(0, 8))));
    expect(uses).toEqual([]);
  });
});
