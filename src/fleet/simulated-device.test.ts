// The simulated device's files and shell (issue 59) over a real WebSocket, as the fleet's agents answer
// them: a listing of the small tree, a read streamed in the session's frames and closed with its hash,
// changes refused as a demo device's, traversal refused, and the tiny shell's echo, arithmetic and
// `stty size` after a resize.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import type { CommandContext, CommandTable } from '../agent/commands/types.js';
import { AgentStreams } from '../agent/device-streams.js';
import { decodeTunnelFrame, encodeTunnelFrame } from '../modules/agent-hub/agent-protocol.js';
import { simulatedDeviceHandlers } from './simulated-device.js';

let server: WebSocketServer | undefined;
afterEach(() => server?.close());

/** The agent's streams on a real socket, and what the server side of it received. */
async function connected(): Promise<{ streams: AgentStreams; bytes: (id: string) => string; texts: Array<Record<string, unknown>> }> {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  const accepted = once(server, 'connection') as Promise<[WebSocket]>;
  const agentSide = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await once(agentSide, 'open');
  const [serverSide] = await accepted;
  const streams = new AgentStreams();
  streams.attach(agentSide);
  const received = new Map<string, string>();
  const texts: Array<Record<string, unknown>> = [];
  serverSide.on('message', (data, isBinary) => {
    if (!isBinary) return texts.push(JSON.parse(String(data)) as Record<string, unknown>);
    const frame = decodeTunnelFrame(data as Buffer)!;
    received.set(frame.sessionId, (received.get(frame.sessionId) ?? '') + frame.payload.toString());
  });
  return { streams, bytes: (id) => received.get(id) ?? '', texts };
}

const ctxOf = (streams: AgentStreams) => ({ streams }) as unknown as CommandContext;

describe('a simulated device', () => {
  it('lists, stats and streams its files, and refuses changes and traversal', async () => {
    const { streams, bytes, texts } = await connected();
    const h = simulatedDeviceHandlers('linux', 'pve-0007') as Required<CommandTable>;
    const ctx = ctxOf(streams);
    const root = (await h.fs_list({ path: '/' }, ctx)) as { entries: Array<{ name: string; type: string }> };
    expect(root.entries.map((e) => `${e.type}:${e.name}`)).toEqual(['dir:etc', 'dir:root', 'dir:var']);
    const paged = (await h.fs_list({ path: '/etc/pve', limit: 1 }, ctx)) as { entries: Array<{ name: string }>; next_cursor: string | null };
    expect(paged.entries.map((e) => e.name)).toEqual(['qemu-server']);
    expect(((await h.fs_list({ path: '/etc/pve', cursor: paged.next_cursor!, limit: 1 }, ctx)) as { entries: Array<{ name: string }>; next_cursor: string | null })).toMatchObject({ entries: [{ name: 'storage.cfg' }], next_cursor: null });
    expect(await h.fs_stat({ path: '/etc/hostname' }, ctx)).toMatchObject({ path: '/etc/hostname', type: 'file', size: 9 });

    expect(await h.fs_read({ session_id: 'r1', path: '/etc/hostname' }, ctx)).toMatchObject({ size: 9 });
    await expect.poll(() => texts.length).toBe(1);
    expect(bytes('r1')).toBe('pve-0007\n');
    expect(texts[0]).toEqual({ type: 'session_closed', session_id: 'r1', bytes: 9, sha256: createHash('sha256').update('pve-0007\n').digest('hex') });

    await expect(h.fs_write({ session_id: 'w1', path: '/etc/hostname', size: 1, sha256: '0'.repeat(64) }, ctx)).rejects.toThrow(/^permission denied: a read-only demo device/);
    await expect(h.fs_delete({ path: '/etc/hostname' }, ctx)).rejects.toThrow(/^permission denied: a read-only demo device/);
    await expect(h.fs_list({ path: '/etc/../root' }, ctx)).rejects.toThrow(/^invalid path: "\.\." is not allowed/);
    await expect(h.fs_stat({ path: '/etc/host\0name' }, ctx)).rejects.toThrow(/^invalid path: contains a NUL/);
    await expect(h.fs_read({ session_id: 'r2', path: '/etc/shadow' }, ctx)).rejects.toThrow(/^not found: \/etc\/shadow/);
  });

  it('has a Windows tree with drive paths', async () => {
    const { streams } = await connected();
    const h = simulatedDeviceHandlers('windows', 'WS-00001') as Required<CommandTable>;
    const listed = (await h.fs_list({ path: 'C:\\' }, ctxOf(streams))) as { path: string; entries: Array<{ name: string }> };
    expect(listed.path).toBe('C:\\');
    expect(listed.entries.map((e) => e.name)).toEqual(['ProgramData', 'Users', 'Windows']);
    await expect(h.fs_list({ path: '/etc' }, ctxOf(streams))).rejects.toThrow(/^invalid path: .* has no drive/);
  });

  it('runs a tiny shell: echo with arithmetic, stty size after a resize, exit', async () => {
    const { streams, bytes, texts } = await connected();
    const h = simulatedDeviceHandlers('freebsd', 'fw-0001.msp.example') as Required<CommandTable>;
    const ctx = ctxOf(streams);
    expect(await h.pty_open({ session_id: 'p1', cols: 80, rows: 24 }, ctx)).toEqual({ pid: null, shell: 'simulated' });
    const type = (text: string) => streams.handleBinary(encodeTunnelFrame('p1', Buffer.from(text)));
    await expect.poll(() => bytes('p1')).toContain('root@fw-0001.msp.example:~# ');
    type('echo $((6*7))\r');
    await expect.poll(() => bytes('p1')).toContain('echo $((6*7))\r\n42\r\n');
    await h.pty_resize({ session_id: 'p1', cols: 132, rows: 43 }, ctx);
    type('stty size\r');
    await expect.poll(() => bytes('p1')).toContain('43 132');
    type('rm -rf /\r');
    await expect.poll(() => bytes('p1')).toContain('rm: command not found');
    type('exit\r');
    await expect.poll(() => texts).toEqual([{ type: 'session_closed', session_id: 'p1', exit_code: 0 }]);
  });
});
