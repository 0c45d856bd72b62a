// VPN peers (contract §8, acceptance 3) end to end: the real server listening, and the reference agent's
// simulated firewall (WireGuard servers ALWAYSON_VPN 10.200.0.1/24 and SITE2SITE, WAN 203.0.113.10)
// creating, listing and deleting peers. Defaults, distinct addresses, client configs, filters, a rogue
// agent's bad answers, 409/404, and no private key in the audit log, the server log or the state file.
import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeviceStateStore, type AgentStateFile } from '../src/agent/device-state.js';
import { generateWireGuardKeyPair } from '../src/agent/wireguard.js';
import { FakeClock } from '../src/platform/clock.js';
import { expectError, type InjectedResponse } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer, type RawPeer } from './helpers/live-agent.js';

const PEER_FIELDS = ['allowed_ips', 'dns', 'endpoint', 'name', 'public_key', 'server_name', 'tunnel_address', 'uuid'];
type Created = Record<string, string | null>;

let t: LiveServer;
let dir: string;
let stateFile: string;
let fw: LiveAgent;
let admin: Record<string, string>;
let writeB: Record<string, string>;
/** Every private key a client configuration carried (also of a rogue's answer). */
const privateKeys: string[] = [];

/** A firewall with a second WireGuard server beside the default one, as its state file says. */
async function seedFirewall(file: string): Promise<void> {
  const store = await DeviceStateStore.open(file, { platform: 'freebsd', node: 'fw-vpn' });
  const keys = generateWireGuardKeyPair();
  await store.update((device) =>
    device.vpn.servers.push({ uuid: randomUUID(), name: 'SITE2SITE', address: '10.201.0.1/24', listen_port: 51821, public_key: keys.publicKey, private_key: keys.privateKey, peers: [] }),
  );
}

beforeAll(async () => {
  t = await startLiveServer({ clock: new FakeClock('2026-05-01T10:00:00Z'), captureLogs: true });
  dir = await mkdtemp(path.join(os.tmpdir(), 'vpn-peers-'));
  stateFile = path.join(dir, 'fw-vpn.json');
  await seedFirewall(stateFile);
  const token = await adminToken(t);
  admin = bearer(token);
  const a = await createCustomer(t.app, token, '6001', 'Alpha');
  const b = await createCustomer(t.app, token, '6002', 'Beta');
  writeB = apiKey((await createKey(t.app, admin, 'write', b.id)).key);
  fw = await t.startAgent((await createKey(t.app, admin, 'agent', a.id)).key, { hostname: 'fw-vpn', platform: 'freebsd', stateFile });
});
afterAll(async () => (await t?.close(), await rm(dir, { recursive: true, force: true })));

const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object, headers = admin, agentId = fw.id) =>
  t.app.inject({ method, url: `/api/v1/agents/${agentId}${url}`, headers, ...(payload ? { payload } : {}) });

/** The firewall's device as its state file holds it. */
const device = async () => (JSON.parse(await readFile(stateFile, 'utf8')) as AgentStateFile).device;
const serverKey = async (name: string) => (await device()).vpn.servers.find((s) => s.name === name)!.public_key;

/** `Key = value` lines of a WireGuard configuration. */
const settings = (config: string) => Object.fromEntries([...config.matchAll(/^(\w+) = (.*)$/gm)].map((m) => [m[1], m[2]]));

/** A WireGuard private key (raw, base64) → its public key. */
function publicKeyOf(privateKey: string): string {
  const der = Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), Buffer.from(privateKey, 'base64')]);
  const jwk = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url').toString('base64');
}

async function createPeer(body: object): Promise<Created> {
  const res = await call('POST', '/vpn/peers', body);
  expect(res.statusCode, res.body).toBe(201);
  const peer = res.json() as Created;
  const { PrivateKey } = settings(peer.client_config!);
  privateKeys.push(PrivateKey!);
  expect(publicKeyOf(PrivateKey!)).toBe(peer.public_key); // the config's key pair is the peer's
  return peer;
}

/** Sends the request and answers the rogue agent's command with `data`. */
async function answered(rogue: RawPeer, data: unknown, request: PromiseLike<InjectedResponse>) {
  const res = Promise.resolve(request);
  const command = await rogue.nextCommand();
  rogue.ws.send(JSON.stringify({ type: 'response', id: command.id, success: true, data }));
  return { res: await res, command };
}

const peers: Record<string, Created> = {};

describe('POST /agents/{id}/vpn/peers', () => {
  it('creates peers with the defaults: distinct tunnel addresses, configs naming the server key and endpoint', async () => {
    for (const name of ['Laptop Anna', 'Laptop Ben']) {
      const peer = (peers[name] = await createPeer({ name }));
      expect(Object.keys(peer).sort()).toEqual([...PEER_FIELDS, 'client_config'].sort());
      expect(peer).toEqual({
        uuid: expect.any(String), name, server_name: 'ALWAYSON_VPN', tunnel_address: expect.stringMatching(/^10\.200\.0\.\d+\/32$/), public_key: expect.any(String),
        allowed_ips: '0.0.0.0/0', dns: null, endpoint: '203.0.113.10:51820', client_config: expect.any(String),
      });
      expect(settings(peer.client_config!)).toEqual({
        PrivateKey: expect.any(String), Address: peer.tunnel_address, PublicKey: await serverKey('ALWAYSON_VPN'), AllowedIPs: '0.0.0.0/0', Endpoint: '203.0.113.10:51820', PersistentKeepalive: '25',
      });
    }
    const [anna, ben] = [peers['Laptop Anna']!, peers['Laptop Ben']!];
    expect(new Set([anna.tunnel_address, ben.tunnel_address, '10.200.0.1/32']).size).toBe(3); // not the server's own either
    expect(anna.public_key).not.toBe(ben.public_key);
    expect(fw.commands).toEqual(['vpn_peer_add', 'vpn_peer_add']);
  });

  it('passes dns, endpoint, allowed_ips and server_name on to the agent', async () => {
    const body = { name: 'Filiale', allowed_ips: '10.1.0.0/24, 10.2.0.0/24', dns: '10.1.0.1', server_name: 'SITE2SITE', endpoint: 'vpn.example.net:51821' };
    const peer = (peers.Filiale = await createPeer(body));
    expect(peer).toMatchObject({ ...body, tunnel_address: expect.stringMatching(/^10\.201\.0\.\d+\/32$/) });
    expect(settings(peer.client_config!)).toMatchObject({ DNS: '10.1.0.1', PublicKey: await serverKey('SITE2SITE'), AllowedIPs: body.allowed_ips, Endpoint: body.endpoint });
    const site = (await device()).vpn.servers.find((s) => s.name === 'SITE2SITE')!;
    expect(site.peers.map((p) => p.uuid)).toEqual([peer.uuid]);
  });

  it("is 502 AGENT_ERROR with the agent's reason for a server the firewall does not have", async () => {
    const res = await call('POST', '/vpn/peers', { name: 'x', server_name: 'NOPE' });
    expect(expectError(res, 502, 'AGENT_ERROR').error).toContain('unknown VPN server NOPE (configured: ALWAYSON_VPN, SITE2SITE)');
  });

  it('refuses a missing name and values that could inject configuration lines (400), without asking the agent', async () => {
    const asked = fw.commands.length;
    for (const body of [{}, { name: '' }, { name: 'a\n[Peer]' }, { name: 'x', allowed_ips: '0.0.0.0/0\nPostUp = rm -rf /' }, { name: 'x', dns: '1.1.1.1\n' + 'x' }, { name: 'x', endpoint: 'host' }]) {
      expectError(await call('POST', '/vpn/peers', body), 400, 'VALIDATION_ERROR');
    }
    expect(fw.commands.length).toBe(asked);
  });
});

describe('GET and DELETE', () => {
  const listed = async (query = '') => {
    const res = await call('GET', `/vpn/peers${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as Created[]).sort((a, b) => a.name!.localeCompare(b.name!));
  };
  const withoutConfig = ({ client_config: _c, ...peer }: Created) => peer;

  it('lists every peer, or those of one server_name, without client configurations', async () => {
    expect(await listed()).toEqual(['Filiale', 'Laptop Anna', 'Laptop Ben'].map((n) => withoutConfig(peers[n]!)));
    expect(await listed('?server_name=SITE2SITE')).toEqual([withoutConfig(peers.Filiale!)]);
    expect((await listed('?server_name=ALWAYSON_VPN')).map((p) => p.name)).toEqual(['Laptop Anna', 'Laptop Ben']);
    expect(fw.commands.slice(-3)).toEqual(['vpn_peer_list', 'vpn_peer_list', 'vpn_peer_list']);
  });

  it('deletes a peer on the firewall; an unknown one is the agent’s error (502)', async () => {
    const target = peers['Laptop Ben']!;
    const res = await call('DELETE', `/vpn/peers/${target.uuid}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ deleted: true });
    expect((await listed()).map((p) => p.uuid)).not.toContain(target.uuid);
    expect((await device()).vpn.servers.flatMap((s) => s.peers.map((p) => p.name)).sort()).toEqual(['Filiale', 'Laptop Anna']);
    expect(expectError(await call('DELETE', `/vpn/peers/${target.uuid}`), 502, 'AGENT_ERROR').error).toContain(`no VPN peer with uuid ${target.uuid}`);
    expectError(await call('DELETE', '/vpn/peers/not%20a%20uuid'), 400, 'VALIDATION_ERROR');
  });
});

describe('failures', () => {
  let rogue: RawPeer;
  let rogueId: string;

  beforeAll(async () => {
    const key = (await createKey(t.app, admin, 'agent')).key;
    rogueId = await t.register(key, 'fw-rogue');
    rogue = await t.openRaw(rogueId, key);
  });
  afterAll(() => rogue.ws.close());

  it('answers 502 AGENT_ERROR to malformed agent answers', async () => {
    const leaked = generateWireGuardKeyPair().privateKey;
    privateKeys.push(leaked);
    const cases: Array<[unknown, 'POST' | 'GET']> = [
      [{ uuid: 'u1', name: 'n', client_config: `[Interface]\nPrivateKey = ${leaked}\n` }, 'POST'],
      [{ peers: 'none' }, 'GET'],
      [[{ uuid: 'u1' }], 'GET'],
    ];
    for (const [data, method] of cases) {
      const { res, command } = await answered(rogue, data, call(method, '/vpn/peers', method === 'POST' ? { name: 'n' } : undefined, admin, rogueId));
      expect(command.command).toBe(method === 'POST' ? 'vpn_peer_add' : 'vpn_peer_list');
      expectError(res, 502, 'AGENT_ERROR');
    }
  });

  it('still filters by server_name when the agent ignores the filter', async () => {
    const peer = (name: string, server_name: string) => ({ uuid: randomUUID(), name, server_name, tunnel_address: '10.9.0.2/32', public_key: 'k', allowed_ips: '0.0.0.0/0' });
    const data = { peers: [peer('a', 'ALWAYSON_VPN'), peer('b', 'OTHER')] };
    const { res, command } = await answered(rogue, data, call('GET', '/vpn/peers?server_name=ALWAYSON_VPN', undefined, admin, rogueId));
    expect(command.params).toEqual({ server_name: 'ALWAYSON_VPN' });
    expect((res.json() as Created[]).map((p) => p.name)).toEqual(['a']);
  });

  it("is 404 for another customer's key, and the agent is never asked", async () => {
    const asked = fw.commands.length;
    expectError(await call('POST', '/vpn/peers', { name: 'intruder' }, writeB), 404, 'NOT_FOUND');
    expectError(await call('GET', '/vpn/peers', undefined, writeB), 404, 'NOT_FOUND');
    expectError(await call('DELETE', `/vpn/peers/${peers['Laptop Anna']!.uuid}`, undefined, writeB), 404, 'NOT_FOUND');
    expect(fw.commands.length).toBe(asked);
  });

  it('is 409 AGENT_NOT_CONNECTED for every operation once the agent has stopped', async () => {
    await fw.stop();
    expectError(await call('POST', '/vpn/peers', { name: 'offline' }), 409, 'AGENT_NOT_CONNECTED');
    expectError(await call('GET', '/vpn/peers'), 409, 'AGENT_NOT_CONNECTED');
    expectError(await call('DELETE', `/vpn/peers/${randomUUID()}`), 409, 'AGENT_NOT_CONNECTED');
  });
});

describe('private keys', () => {
  it('never reach the audit log, the server log or the firewall state, while the audit log records the changes', async () => {
    expect(privateKeys).toHaveLength(4); // three peers and a rogue's malformed answer
    const audit = await t.app.inject({ method: 'GET', url: '/api/v1/audit?limit=1000', headers: admin });
    expect(audit.statusCode, audit.body).toBe(200);
    const entries = audit.json() as Array<{ action: string; path: string; status_code: number }>;
    expect(entries.filter((e) => e.action === 'vpn_peer.create' && e.status_code === 201)).toHaveLength(3);
    expect(entries.some((e) => e.action === 'vpn_peer.delete' && e.status_code === 200)).toBe(true);
    const logged = t.logs().join('\n');
    expect(logged).toContain('/vpn/peers'); // the capture works: the requests were logged
    const state = await readFile(stateFile, 'utf8');
    for (const key of privateKeys) {
      expect(audit.body).not.toContain(key);
      expect(logged).not.toContain(key);
      expect(state).not.toContain(key);
    }
    expect(logged).not.toContain('PrivateKey');
  });
});
