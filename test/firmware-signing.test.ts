// Signed firmware (issue 30): `npm run cli -- firmware sign` makes a key pair and signs offline, with no
// server configuration; an upload carries the signature in `x-firmware-signature` and the server hands
// it on (list, latest, download, heartbeat); the updater given the public key refuses unsigned and
// wrongly signed firmware that the server itself serves, says so in its log and to the server, and
// installs correctly signed firmware; with FIRMWARE_PUBLIC_KEY the server refuses such uploads itself.
import { spawn } from 'node:child_process';
import { createPrivateKey, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Updater } from '../src/agent/updater/updater.js';
import { ConfigError, loadConfig } from '../src/config/env.js';
import { parsePublicKey, publicKeyBase64, signFirmware } from '../src/modules/firmware/firmware-signature.js';
import { FakeClock } from '../src/platform/clock.js';
import { expectError } from './helpers/assertions.js';
import { buildTestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';
import { childEnv, nodeArgs, PROCESS_TEST_TIMEOUT_MS, ROOT } from './helpers/spawn-server.js';
import { agentOf, agentScript, createDevice, driveClock, requestUpdate, sha256, startCuttableProxy, uploadFirmware } from './helpers/updater-rig.js';

let live: LiveServer;
let admin: Record<string, string>;
let agentKey: string;
let work: string;

beforeAll(async () => {
  live = await startLiveServer();
  admin = bearer(await adminToken(live));
  agentKey = (await createKey(live.app, admin, 'agent')).key;
  work = await mkdtemp(path.join(os.tmpdir(), 'rmm-signing-'));
});
afterAll(async () => {
  await live?.close();
  await rm(work, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs(args[0]!), ...args.slice(1)], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const field = (stdout: string, name: string) => new RegExp(`^${name}: (\\S+)$`, 'm').exec(stdout)?.[1];

describe('npm run cli -- firmware sign', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('creates a key pair (0600, PKCS#8) on first use and signs platform, version and SHA-256, without any server configuration', async () => {
    const binary = path.join(work, 'agent-5.0.0');
    await writeFile(binary, 'agent binary 5.0.0');
    const keyFile = path.join(work, 'signing.pem');
    // A configuration the server would refuse to start with, and a data directory that does not exist.
    const hostile = { DATABASE_URL: 'not-a-url', PORT: 'nope', DATA_DIR: path.join(work, 'missing', 'data') };
    const sign = (...extra: string[]) => run(['src/cli.ts', 'firmware', 'sign', '--key', keyFile, '--platform', 'linux', '--version', '5.0.0', ...extra, binary], hostile);

    const first = await sign();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/created a new Ed25519 key pair; the private key is in .*signing\.pem \(mode 0600\)/);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    const pem = await readFile(keyFile, 'utf8');
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    const privateKey = createPrivateKey(pem);
    expect(privateKey.asymmetricKeyType).toBe('ed25519');
    const publicKey = field(first.stdout, 'public-key')!;
    expect(Buffer.from(publicKey, 'base64')).toHaveLength(32);
    expect(publicKey).toBe(publicKeyBase64(createPublicKey(privateKey)));
    expect(field(first.stdout, 'sha256')).toBe(sha256('agent binary 5.0.0'));
    // The signed text, spelled out here independently of the code that builds it.
    const text = `rmm-firmware-signature-v1\nplatform=linux\nversion=5.0.0\nsha256=${sha256('agent binary 5.0.0')}\n`;
    const signature = field(first.stdout, 'signature')!;
    expect(verify(null, Buffer.from(text), parsePublicKey(publicKey), Buffer.from(signature, 'base64'))).toBe(true);
    await expect(readdir(path.join(work, 'missing'))).rejects.toThrow(/ENOENT/); // nothing of a server was created

    const again = await sign();
    expect(again.code).toBe(0);
    expect(field(again.stdout, 'public-key')).toBeUndefined(); // the key existed: not printed unasked
    expect(field(again.stdout, 'signature')).toBe(signature); // Ed25519 is deterministic
    expect(await readFile(keyFile, 'utf8')).toBe(pem);
    expect(field((await sign('--show-public-key')).stdout, 'public-key')).toBe(publicKey);

    const bad = await run(['src/cli.ts', 'firmware', 'sign', '--key', keyFile, '--platform', 'solaris', '--version', '5.0.0', binary]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--platform must be freebsd, linux or windows/);
  });
});

describe('signatures through the server', () => {
  const { privateKey } = generateKeyPairSync('ed25519');
  const content = 'signed agent 6.0.0';
  const signature = signFirmware(privateKey, { platform: 'linux', version: '6.0.0', sha256: sha256(content) });

  it('are stored with the upload and handed on by list, latest, download and the heartbeat', async () => {
    const created = await uploadFirmware(live, admin, '6.0.0', content, signature);
    expect(created.signature).toBe(signature);
    const list = await live.app.inject({ method: 'GET', url: '/api/v1/firmware?platform=linux', headers: apiKey(agentKey) });
    expect((list.json() as Array<{ version: string; signature: string | null }>).find((f) => f.version === '6.0.0')?.signature).toBe(signature);
    const latest = await live.app.inject({ method: 'GET', url: '/api/v1/firmware/latest?platform=linux', headers: apiKey(agentKey) });
    expect(latest.json()).toMatchObject({ version: '6.0.0', signature });
    const download = await live.app.inject({ method: 'GET', url: '/api/v1/firmware/download?platform=linux&version=6.0.0', headers: apiKey(agentKey) });
    expect(download.headers['x-firmware-signature']).toBe(signature);

    const id = await live.register(agentKey, 'signed-agent');
    await requestUpdate(live, admin, id);
    const beat = await live.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(agentKey), payload: { agent_id: id, platform: 'linux' } });
    expect(beat.json()).toMatchObject({ update_available: true, update: { version: '6.0.0', signature } });

    const unsigned = await uploadFirmware(live, admin, '6.0.1', 'unsigned agent');
    expect(unsigned.signature).toBeNull();
    const plain = await live.app.inject({ method: 'GET', url: '/api/v1/firmware/download?platform=linux&version=6.0.1', headers: apiKey(agentKey) });
    expect(plain.headers['x-firmware-signature']).toBeUndefined();
  });

  it('must be standard base64 of 64 bytes in the header; anything else is 400 and nothing is stored', async () => {
    const bytes = Buffer.from(signature, 'base64');
    for (const header of ['not a signature', bytes.subarray(0, 63).toString('base64'), bytes.toString('base64url'), `${signature}A`, '']) {
      const res = await live.app.inject({
        method: 'POST',
        url: '/api/v1/firmware/upload?version=6.1.0&platform=linux',
        headers: { ...admin, 'content-type': 'application/octet-stream', 'x-firmware-signature': header },
        payload: Buffer.from('whatever'),
      });
      expectError(res, 400, 'VALIDATION_ERROR');
    }
    const stored = await live.app.inject({ method: 'GET', url: '/api/v1/firmware?platform=linux', headers: admin });
    expect((stored.json() as Array<{ version: string }>).map((f) => f.version)).not.toContain('6.1.0');
  });
});

describe('the updater with a public key', () => {
  it('refuses unsigned firmware and firmware signed with another key even when the server serves it, and installs correctly signed firmware', async () => {
    const trusted = generateKeyPairSync('ed25519');
    const other = generateKeyPairSync('ed25519');
    const proxy = await startCuttableProxy(live.url);
    const agentId = await live.register(agentKey, 'signature-device');
    const v1 = agentScript('v1');
    const device = await createDevice(v1, [live.url, agentKey, agentId]);
    const clock = new FakeClock();
    const logs: string[] = [];
    const updater = new Updater({
      serverUrl: proxy.url,
      apiKey: agentKey,
      agentId,
      binaryPath: device.binary,
      service: device.service,
      publicKey: parsePublicKey(publicKeyBase64(trusted.publicKey)),
      clock,
      healthPollMs: 10_000,
      healthTimeoutMs: 60 * 60_000,
      heartbeatGapMs: 10 * 60_000, // the gap rule is tested elsewhere; a slow moment here must not trip it
      log: (line) => logs.push(line),
    });
    const downloads = () => proxy.requests.filter((r) => r.startsWith('GET /api/v1/firmware/download')).length;
    try {
      await device.service.start();
      await vi.waitFor(async () => expect((await agentOf(live, admin, agentId)).system?.variant).toBe('v1'), { timeout: 20_000, interval: 100 });
      const sign = (key: typeof trusted, version: string, text: string) => signFirmware(key.privateKey, { platform: 'linux', version, sha256: sha256(text) });

      const unsigned = agentScript('unsigned');
      await uploadFirmware(live, admin, '7.0.1', unsigned);
      await requestUpdate(live, admin, agentId);
      const first = await updater.checkOnce();
      expect(first).toMatchObject({ result: 'refused', version: '7.0.1', reason: expect.stringMatching(/it has no signature/) });
      expect(logs.join('\n')).toMatch(/firmware 7\.0\.1 refused, the installed binary is untouched: it has no signature/);
      expect((await agentOf(live, admin, agentId)).updater).toMatchObject({ state: 'refused', version: '7.0.1', message: expect.stringMatching(/no signature/) });

      const forged = agentScript('forged');
      await uploadFirmware(live, admin, '7.0.2', forged, sign(other, '7.0.2', forged));
      expect(await updater.checkOnce()).toMatchObject({ result: 'refused', version: '7.0.2', reason: expect.stringMatching(/does not verify with this updater's public key/) });
      // A genuine signature of another version does not carry over to these bytes under 7.0.3.
      const replayed = agentScript('replayed');
      await uploadFirmware(live, admin, '7.0.3', replayed, sign(trusted, '7.0.2', replayed));
      expect(await updater.checkOnce()).toMatchObject({ result: 'refused', version: '7.0.3', reason: expect.stringMatching(/does not verify/) });
      expect((await agentOf(live, admin, agentId)).updater).toMatchObject({ state: 'refused', version: '7.0.3' });
      expect(downloads()).toBe(0); // refused before a byte was fetched
      expect(await readFile(device.binary, 'utf8')).toBe(v1);

      const good = agentScript('signed');
      await uploadFirmware(live, admin, '7.0.4', good, sign(trusted, '7.0.4', good));
      expect(await driveClock(clock, updater.checkOnce(), 10_000), logs.join('\n')).toEqual({ result: 'updated', version: '7.0.4' });
      expect(await readFile(device.binary, 'utf8')).toBe(good);
      expect((await agentOf(live, admin, agentId)).updater).toMatchObject({ state: 'healthy', version: '7.0.4' });
      expect(logs.join('\n')).not.toMatch(/signatures are not checked/);
    } finally {
      await updater.stop();
      await device.remove();
      await proxy.close();
    }
  });

  it('without a key, says once that signatures are not checked; a malformed --public-key stops `npm run updater` with its usage', async () => {
    const logs: string[] = [];
    const updater = new Updater({ serverUrl: live.url, apiKey: agentKey, agentId: '00000000000000000000000000000abc', binaryPath: path.join(work, 'none'), service: createNoService(), log: (l) => logs.push(l) });
    await updater.checkOnce().catch(() => undefined);
    await updater.checkOnce().catch(() => undefined);
    expect(logs.filter((l) => /firmware signatures are not checked/.test(l))).toHaveLength(1);

    const res = await run(['src/agent/updater/main.ts', '--server', live.url, '--agent-id', 'abcdefabcdefabcdef', '--binary', '/bin/sh', '--public-key', 'bm9wZQ=='], { RMM_AGENT_KEY: 'k' });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--public-key: the public key must be base64 of the raw 32-byte Ed25519 key[\s\S]*Usage: RMM_AGENT_KEY=KEY npm run updater/);
    expect(res.stderr).not.toMatch(/warning: --key/);
  }, PROCESS_TEST_TIMEOUT_MS);
});

function createNoService() {
  return { description: 'no service', start: async () => undefined, stop: async () => undefined, isRunning: async () => false };
}

describe('a server with FIRMWARE_PUBLIC_KEY', () => {
  it('keeps only uploads whose signature verifies with it', async () => {
    const trusted = generateKeyPairSync('ed25519');
    const other = generateKeyPairSync('ed25519');
    const t = await buildTestApp({ env: { FIRMWARE_PUBLIC_KEY: publicKeyBase64(trusted.publicKey) } });
    try {
      const headers = bearer(await adminToken(t));
      const upload = (version: string, text: string, signature?: string) =>
        t.app.inject({
          method: 'POST',
          url: `/api/v1/firmware/upload?version=${version}&platform=windows`,
          headers: { ...headers, 'content-type': 'application/octet-stream', ...(signature ? { 'x-firmware-signature': signature } : {}) },
          payload: Buffer.from(text),
        });
      const sign = (key: typeof trusted, version: string, text: string) => signFirmware(key.privateKey, { platform: 'windows', version, sha256: sha256(text) });

      expect((await upload('1.0.0', 'no signature')).json()).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.stringMatching(/accepts only signed firmware/) });
      const wrong = await upload('1.0.0', 'other key', sign(other, '1.0.0', 'other key'));
      expectError(wrong, 400, 'VALIDATION_ERROR');
      expect(wrong.json()).toMatchObject({ error: expect.stringMatching(/does not verify with FIRMWARE_PUBLIC_KEY/) });
      expect(await readdir(path.join(t.config.dataDir, 'blobs')).catch(() => [])).toEqual([]); // its bytes are not kept
      const ok = await upload('1.0.0', 'signed right', sign(trusted, '1.0.0', 'signed right'));
      expect(ok.statusCode, ok.body).toBe(201);
    } finally {
      await t.close();
    }
  });

  it('must be base64 of a raw 32-byte key, or the server does not start', () => {
    expect(() => loadConfig({ FIRMWARE_PUBLIC_KEY: 'abc' })).toThrow(ConfigError);
    expect(() => loadConfig({ FIRMWARE_PUBLIC_KEY: 'abc' })).toThrow(/FIRMWARE_PUBLIC_KEY must be base64 of a raw 32-byte Ed25519 public key/);
  });
});
