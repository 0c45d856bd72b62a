// Firmware distribution (contract §9) over a real socket: upload streamed to disk, list, latest in
// numeric-aware order, download with its headers and ETag; hostile versions and platforms refused; an
// interrupted upload leaves nothing; and the update flag as heartbeats see it (spec state table).
import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectError } from './helpers/assertions.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

let s: LiveServer;
let writeKey: string;
let agentKey: string;
let readKey: string;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function upload(query: string, body: Buffer, key = writeKey): Promise<Response> {
  return fetch(`${s.url}/api/v1/firmware/upload?${query}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/octet-stream' }, body });
}

const get = (url: string, key = agentKey, headers: Record<string, string> = {}) => fetch(`${s.url}/api/v1${url}`, { headers: { 'x-api-key': key, ...headers } });

beforeAll(async () => {
  s = await startLiveServer({});
  const admin = bearer(await adminToken(s));
  writeKey = (await createKey(s.app, admin, 'write')).key;
  agentKey = (await createKey(s.app, admin, 'agent')).key;
  readKey = (await createKey(s.app, admin, 'read')).key;
});
afterAll(() => s?.close());

describe('the firmware store', () => {
  it('round-trips a binary: upload → list → latest → download give the same bytes and SHA-256', async () => {
    const binary = randomBytes(3 * 1024 * 1024 + 17);
    const res = await upload('version=1.9.0&platform=linux', binary);
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: number; sha256: string; size: number; version: string; platform: string; created_at: string };
    expect(created).toMatchObject({ version: '1.9.0', platform: 'linux', sha256: sha(binary), size: binary.length });

    expect((await upload('version=1.10.0&platform=linux', Buffer.from('newer'))).status).toBe(201);
    expect((await upload('version=1.2.0&platform=linux', Buffer.from('older'))).status).toBe(201);
    const listed = (await (await get('/firmware?platform=linux')).json()) as Array<{ version: string }>;
    expect(listed.map((f) => f.version)).toEqual(['1.10.0', '1.9.0', '1.2.0']);
    expect(((await (await get('/firmware/latest?platform=linux')).json()) as { version: string }).version).toBe('1.10.0'); // numeric-aware

    const download = await get('/firmware/download?platform=linux&version=1.9.0');
    expect(download.status).toBe(200);
    expect(download.headers.get('x-firmware-version')).toBe('1.9.0');
    expect(download.headers.get('x-firmware-sha256')).toBe(sha(binary));
    expect(download.headers.get('content-length')).toBe(String(binary.length));
    const etag = download.headers.get('etag')!;
    expect(etag).toBe(`"${sha(binary)}"`);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(sha(bytes)).toBe(sha(binary));
    // The updater's conditional request: nothing new → 304 without a body.
    const again = await get('/firmware/download?platform=linux&version=1.9.0', agentKey, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    // Without a version: the latest.
    expect((await get('/firmware/download?platform=linux')).headers.get('x-firmware-version')).toBe('1.10.0');
  });

  it('refuses a duplicate version unless replace=true, and replaces its bytes then', async () => {
    expect((await upload('version=2.0.0&platform=windows', Buffer.from('first'))).status).toBe(201);
    const duplicate = await upload('version=2.0.0&platform=windows', Buffer.from('second'));
    expect(duplicate.status).toBe(409);
    expect(((await duplicate.json()) as { code: string }).code).toBe('CONFLICT');
    const replaced = await upload('version=2.0.0&platform=windows&replace=true', Buffer.from('second'));
    expect(replaced.status).toBe(201);
    expect(Buffer.from(await (await get('/firmware/download?platform=windows&version=2.0.0')).arrayBuffer()).toString()).toBe('second');
    // The replaced bytes are gone from disk; nothing else is left behind.
    const files = await readdir(path.join(s.config.dataDir, 'blobs'));
    expect(files).not.toContain(sha(Buffer.from('first')));
    expect(files.filter((f) => f.startsWith('.upload-'))).toEqual([]);
  });

  it.each([
    ['version=../../x&platform=linux', 'a path in the version'],
    ['version=1.0/evil&platform=linux', 'a slash in the version'],
    ['version=.hidden&platform=linux', 'a leading dot'],
    ['version=1.0&platform=plan9', 'an unknown platform'],
    ['platform=linux', 'no version'],
  ])('refuses %s (%s) with 400 and stores nothing', async (query) => {
    const res = await upload(query, Buffer.from('x'));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('VALIDATION_ERROR');
    expect((await get('/firmware?platform=linux')).status).toBe(200);
    expect(((await (await get('/firmware')).json()) as Array<{ version: string }>).map((f) => f.version)).not.toContain('../../x');
  });

  it('refuses an empty body (400), a read or agent key (403), and answers 404 for a platform without firmware', async () => {
    expect((await upload('version=3.0.0&platform=freebsd', Buffer.alloc(0))).status).toBe(400);
    expect((await upload('version=3.0.0&platform=freebsd', Buffer.from('x'), readKey)).status).toBe(403);
    expect((await upload('version=3.0.0&platform=freebsd', Buffer.from('x'), agentKey)).status).toBe(403);
    expectError(await s.app.inject({ method: 'GET', url: '/api/v1/firmware/latest?platform=freebsd', headers: apiKey(agentKey) }), 404, 'NOT_FOUND');
    expectError(await s.app.inject({ method: 'GET', url: '/api/v1/firmware/download?platform=freebsd', headers: apiKey(agentKey) }), 404, 'NOT_FOUND');
  });

  it('keeps nothing of an upload whose client goes away half-way', async () => {
    const port = new URL(s.url).port;
    await new Promise<void>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/firmware/upload?version=9.9.9&platform=linux', headers: { 'x-api-key': writeKey, 'content-type': 'application/octet-stream', 'content-length': String(8 * 1024 * 1024) } });
      req.on('error', () => resolve());
      req.write(randomBytes(1024 * 1024), () => setTimeout(() => req.destroy(), 100));
      req.on('close', () => resolve());
    });
    await vi.waitFor(async () => expect((await readdir(path.join(s.config.dataDir, 'blobs'))).filter((f) => f.startsWith('.upload-'))).toEqual([]));
    const listed = (await (await get('/firmware?platform=linux')).json()) as Array<{ version: string }>;
    expect(listed.map((f) => f.version)).not.toContain('9.9.9');
  });
});

describe('the update request flag', () => {
  /** A registered agent sending one heartbeat; returns the heartbeat answer. */
  const heartbeat = async (agentId: string, platform: string, agentSha256?: string) => {
    // Over the socket: the download URL is built on the address the heartbeat came to.
    const res = await fetch(`${s.url}/api/v1/agent/heartbeat`, {
      method: 'POST',
      headers: { 'x-api-key': agentKey, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: agentId, platform, ...(agentSha256 ? { agent_sha256: agentSha256 } : {}) }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { update_available: boolean; update?: { version: string; sha256: string; size: number; download_url: string } };
  };
  const flagOf = async (agentId: string) =>
    ((await s.app.inject({ method: 'GET', url: `/api/v1/agents/${agentId}`, headers: apiKey(writeKey) })).json() as { update_requested: boolean }).update_requested;

  it('offers nothing for a platform without firmware; DELETE clears; an agent key may clear, not set', async () => {
    const id = await s.register(agentKey, 'pve-no-fw');
    await s.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/request-update`, headers: apiKey(writeKey) });
    expect((await heartbeat(id, 'freebsd')).update_available).toBe(false); // no freebsd firmware yet
    expect((await heartbeat(id, 'windows')).update_available).toBe(true); // windows has 2.0.0 from the store tests
    expectError(await s.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/request-update`, headers: apiKey(agentKey) }), 403, 'FORBIDDEN');
    const cleared = await s.app.inject({ method: 'DELETE', url: `/api/v1/agents/${id}/request-update`, headers: apiKey(agentKey) });
    expect(cleared.json()).toEqual({ update_requested: false });
    expect((await heartbeat(id, 'windows')).update_available).toBe(false);
  });

  it('offers the update only while requested and firmware differs, and clears itself once the agent runs it', async () => {
    const binary = randomBytes(4096);
    await upload('version=5.0.0&platform=freebsd', binary);
    const id = await s.register(agentKey, 'fw-update');
    const oldSha = sha(Buffer.from('old agent'));
    expect(await heartbeat(id, 'freebsd', oldSha)).toMatchObject({ update_available: false }); // not requested

    const set = await s.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/request-update`, headers: apiKey(writeKey) });
    expect(set.json()).toEqual({ update_requested: true });
    const offered = await heartbeat(id, 'freebsd', oldSha);
    expect(offered.update_available).toBe(true);
    expect(offered.update).toEqual({ version: '5.0.0', sha256: sha(binary), size: 4096, download_url: `${s.url}/api/v1/firmware/download?platform=freebsd&version=5.0.0`, signature: null });
    const download = await fetch(offered.update!.download_url, { headers: { 'x-api-key': agentKey } });
    expect(sha(Buffer.from(await download.arrayBuffer()))).toBe(sha(binary));

    // The agent now runs the new binary: the flag clears, and nothing more is offered.
    expect(await heartbeat(id, 'freebsd', sha(binary))).toEqual(expect.objectContaining({ update_available: false }));
    expect(await flagOf(id)).toBe(false);
    expect((await heartbeat(id, 'freebsd', oldSha)).update_available).toBe(false);
  });

  it('request-update-all flags the agents in the caller\'s scope only', async () => {
    const admin = bearer(await adminToken(s));
    const customer = await createCustomer(s.app, (admin.authorization ?? '').slice(7), 'K-FW-1');
    const scopedAgentKey = (await createKey(s.app, admin, 'agent', customer.id)).key;
    const scopedWriteKey = (await createKey(s.app, admin, 'write', customer.id)).key;
    const inside = await s.register(scopedAgentKey, 'fw-inside');
    const outside = await s.register(agentKey, 'fw-outside');
    const res = await s.app.inject({ method: 'POST', url: '/api/v1/agents/request-update-all', headers: apiKey(scopedWriteKey) });
    expect(res.json()).toEqual({ updated: 1 });
    expect(await flagOf(inside)).toBe(true);
    expect(await flagOf(outside)).toBe(false);
  });

  it('request-update-all with a platform flags that platform\'s agents only (the console\'s filter)', async () => {
    const admin = bearer(await adminToken(s));
    const customer = await createCustomer(s.app, (admin.authorization ?? '').slice(7), 'K-FW-2');
    const agentKeyOfCustomer = (await createKey(s.app, admin, 'agent', customer.id)).key;
    const writeKey = (await createKey(s.app, admin, 'write', customer.id)).key;
    const registered = async (hostname: string, platform: string) => {
      const res = await s.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(agentKeyOfCustomer), payload: { hostname, platform } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ agent_id: string }>().agent_id;
    };
    const firewall = await registered('fw-only', 'freebsd');
    const host = await registered('pve-not', 'linux');
    const res = await s.app.inject({ method: 'POST', url: '/api/v1/agents/request-update-all?platform=freebsd', headers: apiKey(writeKey) });
    expect(res.json()).toEqual({ updated: 1 });
    expect(await flagOf(firewall)).toBe(true);
    expect(await flagOf(host)).toBe(false);
    const bad = await s.app.inject({ method: 'POST', url: '/api/v1/agents/request-update-all?platform=solaris', headers: apiKey(writeKey) });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await flagOf(host)).toBe(false);
  });
});
