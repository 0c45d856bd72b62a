// Firmware administration (issue 30, item 9): a bad highest version can be deleted, not only overwritten.
// DELETE /firmware/{id} (write access) removes the record, and its file once nothing else names the same
// bytes; a pending update falls at once to the next highest version or to none; the deletion is audited.
// Any stored version can still be downloaded by name.
import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yazl from 'yazl';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

let s: LiveServer;
let admin: Record<string, string>;
let writeKey: string;
let readKey: string;
let agentKey: string;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface FirmwareDto {
  id: number;
  version: string;
  platform: string;
  sha256: string;
}

async function upload(platform: string, version: string, body: Buffer): Promise<FirmwareDto> {
  const res = await fetch(`${s.url}/api/v1/firmware/upload?version=${version}&platform=${platform}`, {
    method: 'POST',
    headers: { ...apiKey(writeKey), 'content-type': 'application/octet-stream' },
    body,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as FirmwareDto;
}
const remove = (id: number | string, headers: Record<string, string> = apiKey(writeKey)) => s.app.inject({ method: 'DELETE', url: `/api/v1/firmware/${id}`, headers });
const versions = async (platform: string) =>
  (await s.app.inject({ method: 'GET', url: `/api/v1/firmware?platform=${platform}`, headers: apiKey(agentKey) })).json<FirmwareDto[]>().map((f) => f.version);
const download = (platform: string, version?: string) =>
  fetch(`${s.url}/api/v1/firmware/download?platform=${platform}${version ? `&version=${version}` : ''}`, { headers: apiKey(agentKey) });
const blobFiles = async () => readdir(path.join(s.config.dataDir, 'blobs'));

beforeAll(async () => {
  s = await startLiveServer({});
  admin = bearer(await adminToken(s));
  writeKey = (await createKey(s.app, admin, 'write')).key;
  readKey = (await createKey(s.app, admin, 'read')).key;
  agentKey = (await createKey(s.app, admin, 'agent')).key;
});
afterAll(() => s?.close());

describe('DELETE /firmware/{id}', () => {
  it('removes the version: gone from the list and downloads, the next highest is the latest, its file is deleted', async () => {
    const bins = { '3.1.0': randomBytes(2048), '3.9.0': randomBytes(2048), '3.10.0': randomBytes(2048) };
    const stored = await Promise.all(Object.entries(bins).map(([version, body]) => upload('freebsd', version, body)));
    // Any stored version downloads by name, with its own bytes.
    for (const [version, body] of Object.entries(bins)) {
      const res = await download('freebsd', version);
      expect(res.headers.get('x-firmware-version')).toBe(version);
      expect(sha(Buffer.from(await res.arrayBuffer()))).toBe(sha(body));
    }

    const highest = stored.find((f) => f.version === '3.10.0')!;
    const res = await remove(highest.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ deleted: true });
    expect(await versions('freebsd')).toEqual(['3.9.0', '3.1.0']);
    const newest = await download('freebsd');
    expect(newest.headers.get('x-firmware-version')).toBe('3.9.0');
    expect(sha(Buffer.from(await newest.arrayBuffer()))).toBe(sha(bins['3.9.0']));
    expect((await download('freebsd', '3.10.0')).status).toBe(404);
    const latest = await s.app.inject({ method: 'GET', url: '/api/v1/firmware/latest?platform=freebsd', headers: apiKey(agentKey) });
    expect(latest.json<FirmwareDto>().version).toBe('3.9.0');
    expect(await blobFiles()).not.toContain(sha(bins['3.10.0']));
    expect(await blobFiles()).toContain(sha(bins['3.9.0']));

    expectError(await remove(highest.id), 404, 'NOT_FOUND'); // already gone
  });

  it('keeps the file while another firmware or the installer still uses the same bytes', async () => {
    const zip = new yazl.ZipFile();
    zip.addBuffer(Buffer.from('setup'), 'setup.ps1');
    zip.end();
    const bytes = await buffer(zip.outputStream as Readable);
    const linux = await upload('linux', '7.0.0', bytes);
    const windows = await upload('windows', '7.0.0', bytes);
    const installer = await fetch(`${s.url}/api/v1/installer/upload?platform=windows`, { method: 'POST', headers: { ...apiKey(writeKey), 'content-type': 'application/zip' }, body: bytes });
    expect(installer.status, await installer.clone().text()).toBe(201);

    expect((await remove(linux.id)).statusCode).toBe(200);
    expect(await blobFiles()).toContain(sha(bytes));
    expect(sha(Buffer.from(await (await download('windows', '7.0.0')).arrayBuffer()))).toBe(sha(bytes));
    expect((await remove(windows.id)).statusCode).toBe(200);
    expect(await blobFiles()).toContain(sha(bytes)); // the installer package is the same file
    expect((await fetch(`${s.url}/api/v1/installer/download?platform=windows`, { headers: apiKey(agentKey) })).status).toBe(200);
  });

  it('moves a pending update to the next highest version at once, then to none', async () => {
    const low = await upload('linux', '8.1.0', randomBytes(512));
    const high = await upload('linux', '8.2.0', randomBytes(512));
    const agentId = await s.register(agentKey, 'pve-delete');
    expect((await s.app.inject({ method: 'POST', url: `/api/v1/agents/${agentId}/request-update`, headers: admin })).statusCode).toBe(200);
    const heartbeat = async () => {
      const res = await s.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(agentKey), payload: { agent_id: agentId, platform: 'linux', agent_sha256: sha(Buffer.from('old')) } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ update_available: boolean; update?: { version: string } }>();
    };
    expect((await heartbeat()).update?.version).toBe('8.2.0');

    expect((await remove(high.id)).statusCode).toBe(200);
    expect(await heartbeat()).toMatchObject({ update_available: true, update: { version: '8.1.0' } });
    expect((await remove(low.id)).statusCode).toBe(200);
    expect(await heartbeat()).toMatchObject({ update_available: false });
    expect((await heartbeat()).update).toBeUndefined();
  });

  it('needs write access, answers 404 for an unknown id and 400 for one that is not a number, and is audited', async () => {
    const firmware = await upload('windows', '9.0.0', randomBytes(64));
    expectError(await remove(firmware.id, apiKey(readKey)), 403, 'FORBIDDEN');
    expectError(await remove(firmware.id, apiKey(agentKey)), 403, 'FORBIDDEN');
    expectError(await remove(2_000_000_000), 404, 'NOT_FOUND');
    expect((await remove('abc')).statusCode).toBe(400);
    expect(await versions('windows')).toContain('9.0.0');

    expect((await remove(firmware.id, admin)).statusCode).toBe(200);
    const audit = await s.app.inject({ method: 'GET', url: '/api/v1/audit?action=firmware.delete', headers: admin });
    expect(audit.json<Array<{ action: string; path: string; status_code: number }>>()).toContainEqual(
      expect.objectContaining({ action: 'firmware.delete', path: `/api/v1/firmware/${firmware.id}`, status_code: 200 }),
    );
  });
});
