// Reference agent command handlers (contract §5), driven through the same dispatcher the agent's socket
// uses: real shell commands for exec, the backup file, update/reboot/hypervisor on the simulated device,
// and the five-step WireGuard peer creation, with the device state persisted in a real JSON file.
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dispatchText } from '../src/agent/commands/index.js';
import type { CommandContext } from '../src/agent/commands/types.js';
import { DeviceStateStore } from '../src/agent/device-state.js';
import { DEFAULT_BACKUP_FILE } from '../src/agent/reference-agent.js';

let dir: string;
let stateFile: string;
let store: DeviceStateStore;
const reboots: number[] = [];

function context(overrides: Partial<CommandContext> = {}): CommandContext {
  return {
    device: store,
    backupFile: DEFAULT_BACKUP_FILE,
    signal: new AbortController().signal,
    scheduleReboot: (delay) => reboots.push(delay),
    now: () => new Date('2026-11-22T10:00:00Z'),
    ...overrides,
  };
}

let seq = 0;
async function send(command: string, params: Record<string, unknown> = {}, ctx = context()) {
  const id = `cmd-${++seq}`;
  const result = await dispatchText(JSON.stringify({ type: 'command', id, command, params }), ctx);
  if (result.kind !== 'answer') throw new Error(`frame dropped: ${result.reason}`);
  expect(result.frame.id).toBe(id);
  expect(JSON.parse(result.text)).toEqual(result.frame);
  return result.frame;
}

async function ok(command: string, params: Record<string, unknown> = {}, ctx = context()) {
  const frame = await send(command, params, ctx);
  if (!frame.success) throw new Error(`${command} failed: ${frame.error}`);
  return frame.data as Record<string, unknown>;
}

async function failure(command: string, params: Record<string, unknown> = {}) {
  const frame = await send(command, params);
  expect(frame.success).toBe(false);
  return frame.success ? '' : (frame.error ?? '');
}

/** WireGuard private key (raw, base64) → its public key, through a PKCS#8 wrapper. */
function publicKeyOf(privateKey: string): string {
  const der = Buffer.concat([Buffer.from('302e020100300506032b656e04220420', 'hex'), Buffer.from(privateKey, 'base64')]);
  const jwk = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' });
  return Buffer.from(jwk.x as string, 'base64url').toString('base64');
}

function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  // A killed process its new parent has not reaped yet is a zombie (state Z): it runs no more.
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'agent-commands-'));
  stateFile = path.join(dir, 'state.json');
  store = await DeviceStateStore.open(stateFile, { platform: 'linux', node: 'pve-test' });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('exec', () => {
  it('returns exit code, stdout and stderr of a real shell', async () => {
    const data = await ok('exec', { command: 'echo hi; echo err >&2; exit 3', timeout: 10 });
    expect(data).toMatchObject({ exit_code: 3, stdout: 'hi\n', stderr: 'err\n', timed_out: false, stdout_truncated: false });
  });

  it('kills the process group when the timeout passes and answers as timed out', async () => {
    const started = Date.now();
    const data = await ok('exec', { command: 'sleep 5 & echo $!; wait', timeout: 1 });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(data).toMatchObject({ exit_code: null, timed_out: true });
    const sleepPid = Number(String(data.stdout).trim());
    expect(sleepPid).toBeGreaterThan(0);
    await vi.waitFor(() => expect(isGone(sleepPid)).toBe(true), { timeout: 2000 });
  });

  it('caps stdout at 1 MiB and says so', async () => {
    const data = await ok('exec', { command: "head -c 1500000 /dev/zero | tr '\\0' a; echo done >&2", timeout: 20 });
    expect(data).toMatchObject({ exit_code: 0, stderr: 'done\n', stdout_truncated: true, stderr_truncated: false });
    expect(String(data.stdout)).toHaveLength(1024 * 1024);
  });

  it('rejects params outside the protocol with the reason', async () => {
    expect(await failure('exec', { command: 'true' })).toMatch(/^invalid params for exec: timeout/);
  });
});

describe('backup', () => {
  it('answers with the bundled OPNsense config.xml by default', async () => {
    const data = await ok('backup');
    expect(data.content).toBe(await readFile(DEFAULT_BACKUP_FILE, 'utf8'));
    expect(data.content).toMatch(/^<\?xml[\s\S]*<opnsense>[\s\S]*ALWAYSON_VPN[\s\S]*<\/opnsense>\n$/);
  });

  it('reads the configured file, and fails readably when it is missing', async () => {
    const file = path.join(dir, 'custom.xml');
    await writeFile(file, '<opnsense><system/></opnsense>\n');
    expect(await ok('backup', {}, context({ backupFile: file }))).toEqual({ content: '<opnsense><system/></opnsense>\n' });
    const frame = await send('backup', {}, context({ backupFile: path.join(dir, 'missing.xml') }));
    expect(frame).toMatchObject({ success: false, error: expect.stringContaining('missing.xml') });
  });
});

describe('updates and reboot', () => {
  it('applies security updates only, then the rest with a reboot', async () => {
    const check = await ok('update_check');
    expect(check).toMatchObject({ current_version: '9.1.1', reboot_required: false });
    const updates = check.updates as { name: string; security: boolean }[];
    expect(updates.map((u) => u.name)).toEqual(['pve-manager', 'openssl', 'proxmox-kernel-6.17']);

    const security = await ok('update', { reboot: false, security_only: true });
    expect((security.applied as { name: string }[]).map((u) => u.name)).toEqual(['openssl']);
    expect(security).toMatchObject({ current_version: '9.1.1', reboot_required: true, rebooting: false });
    expect(((await ok('update_check')).updates as unknown[]).length).toBe(2);
    expect(reboots).toEqual([]);

    const rest = await ok('update', { reboot: true });
    expect((rest.applied as { name: string }[]).map((u) => u.name)).toEqual(['pve-manager', 'proxmox-kernel-6.17']);
    expect(rest).toMatchObject({ previous_version: '9.1.1', current_version: '9.1.2', remaining: [], rebooting: true });
    expect(reboots).toEqual([0]);
    expect(await ok('update_check')).toMatchObject({ current_version: '9.1.2', updates: [] });
  });

  it('major_update sets the version; reboot answers first and schedules the reboot', async () => {
    expect(await ok('major_update', { version: '10.0.1', reboot: false })).toMatchObject({ current_version: '10.0.1', changed: true, rebooting: false });
    expect((await ok('update_check')).current_version).toBe('10.0.1');
    expect(await ok('reboot', { delay: 30 })).toEqual({ rebooting: true, delay: 30 });
    expect(reboots).toEqual([0, 30]);
  });
});

describe('hypervisor_action', () => {
  const guest = (vmid: number) => store.device.guests.find((g) => g.vmid === vmid);

  it('starts, stops and shuts down guests of the simulated node', async () => {
    expect(guest(100)?.status).toBe('running');
    expect(await ok('hypervisor_action', { action: 'stop', vmid: 100, type: 'vm' })).toMatchObject({ previous_status: 'running', status: 'stopped' });
    expect(guest(100)?.status).toBe('stopped');
    expect(await ok('hypervisor_action', { action: 'start', vmid: 101, type: 'vm', node: 'pve-test' })).toMatchObject({ status: 'running' });
    expect(await ok('hypervisor_action', { action: 'shutdown', vmid: 102, type: 'vm' })).toMatchObject({ status: 'stopped' });
    expect(await ok('hypervisor_action', { action: 'stop', vmid: 200, type: 'container' })).toMatchObject({ status: 'stopped' });
    expect(guest(200)?.status).toBe('stopped');
  });

  it('refuses container shutdown, unknown guests, wrong types and wrong nodes', async () => {
    expect(await failure('hypervisor_action', { action: 'shutdown', vmid: 201, type: 'container' })).toMatch(/not supported for containers/);
    expect(await failure('hypervisor_action', { action: 'start', vmid: 999, type: 'vm' })).toBe('no guest with vmid 999');
    expect(await failure('hypervisor_action', { action: 'start', vmid: 100, type: 'container' })).toBe('guest 100 is a vm, not a container');
    expect(await failure('hypervisor_action', { action: 'start', vmid: 100, type: 'vm', node: 'pve-other' })).toMatch(/not on node pve-other/);
    expect(await failure('hypervisor_action', { action: 'reset', vmid: 100, type: 'vm' })).toMatch(/^invalid params for hypervisor_action: action/);
    expect(guest(100)?.status).toBe('stopped');
  });
});

describe('VPN peers', () => {
  const server = () => store.device.vpn.servers[0]!;

  it('the device ships a WireGuard server with a real X25519 keypair', () => {
    expect(server()).toMatchObject({ name: 'ALWAYSON_VPN', address: '10.200.0.1/24', listen_port: 51820 });
    expect(publicKeyOf(server().private_key)).toBe(server().public_key);
  });

  it('creates peers with fresh keys on the next free addresses and complete client configs', async () => {
    const reloads = store.device.vpn.reload_count;
    const a = await ok('vpn_peer_add', { name: 'laptop-a', server_name: 'ALWAYSON_VPN', allowed_ips: '0.0.0.0/0' });
    const b = await ok('vpn_peer_add', { name: 'laptop-b', server_name: 'ALWAYSON_VPN', allowed_ips: '10.1.0.0/24', dns: '10.1.0.1', endpoint: 'vpn.example.com' });
    expect(a).toMatchObject({ name: 'laptop-a', server_name: 'ALWAYSON_VPN', tunnel_address: '10.200.0.2/32', dns: null, endpoint: '203.0.113.10:51820' });
    expect(b).toMatchObject({ tunnel_address: '10.200.0.3/32', dns: '10.1.0.1', endpoint: 'vpn.example.com:51820', allowed_ips: '10.1.0.0/24' });
    expect(store.device.vpn.reload_count).toBe(reloads + 2);

    for (const peer of [a, b]) {
      const config = String(peer.client_config);
      const privateKey = /^PrivateKey = (\S+)$/m.exec(config)?.[1] ?? '';
      expect(Buffer.from(privateKey, 'base64')).toHaveLength(32);
      expect(publicKeyOf(privateKey)).toBe(peer.public_key);
      expect(config).toContain(`Address = ${String(peer.tunnel_address)}`);
      expect(config).toContain(`[Peer]\nPublicKey = ${server().public_key}\nAllowedIPs = ${String(peer.allowed_ips)}\nEndpoint = ${String(peer.endpoint)}\nPersistentKeepalive = 25\n`);
      expect(await readFile(stateFile, 'utf8')).not.toContain(privateKey);
    }
    expect(String(a.client_config)).not.toContain('DNS =');
    expect(String(b.client_config)).toContain('DNS = 10.1.0.1\n');
  });

  it('lists without client_config, deletes, and reuses the freed address', async () => {
    const { peers } = (await ok('vpn_peer_list', { server_name: 'ALWAYSON_VPN' })) as { peers: Record<string, unknown>[] };
    expect(peers.map((p) => p.name)).toEqual(['laptop-a', 'laptop-b']);
    expect(Object.keys(peers[0]!).sort()).toEqual(['allowed_ips', 'dns', 'endpoint', 'name', 'public_key', 'server_name', 'tunnel_address', 'uuid']);

    expect(await ok('vpn_peer_delete', { uuid: peers[0]!.uuid })).toEqual({});
    expect(((await ok('vpn_peer_list')).peers as unknown[]).length).toBe(1);
    const c = await ok('vpn_peer_add', { name: 'laptop-c', server_name: 'ALWAYSON_VPN', allowed_ips: '0.0.0.0/0' });
    expect(c.tunnel_address).toBe('10.200.0.2/32');
    expect(await failure('vpn_peer_delete', { uuid: String(peers[0]!.uuid) })).toMatch(/^no VPN peer with uuid/);
  });

  it('refuses an unknown server', async () => {
    expect(await failure('vpn_peer_add', { name: 'x', server_name: 'NOPE', allowed_ips: '0.0.0.0/0' })).toMatch(/^unknown VPN server NOPE/);
    expect(await failure('vpn_peer_list', { server_name: 'NOPE' })).toMatch(/^unknown VPN server NOPE/);
  });

  it('keeps the device in its state file: a new instance sees the same peers and guests', async () => {
    await store.flush();
    const reopened = await DeviceStateStore.open(stateFile, { platform: 'linux', node: 'ignored' });
    expect(reopened.device).toEqual(store.device);
    const { peers } = (await ok('vpn_peer_list', {}, context({ device: reopened }))) as { peers: { name: string }[] };
    expect(peers.map((p) => p.name)).toEqual(['laptop-b', 'laptop-c']);
  });
});

describe('frames the dispatcher does not run', () => {
  it('answers unknown commands and invalid frames with an id; drops the rest', async () => {
    expect(await failure('frobnicate')).toBe('unknown command frobnicate');
    expect(await failure('tunnel_connect', { session_id: 's1', tunnel_id: 't1', target_host: '127.0.0.1', target_port: 22 })).toBe(
      'tunnels are not supported by this agent version',
    );
    const invalid = await dispatchText(JSON.stringify({ type: 'command', id: 'x1', params: {} }), context());
    expect(invalid).toMatchObject({ kind: 'answer', frame: { type: 'response', id: 'x1', success: false } });
    expect(await dispatchText('not json', context())).toEqual({ kind: 'dropped', reason: 'not JSON' });
    expect((await dispatchText(JSON.stringify({ type: 'hello' }), context())).kind).toBe('dropped');
  });
});
