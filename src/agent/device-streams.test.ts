// The agent's device streams over a real WebSocket: frames reach the session's handler, what the device
// produces goes out in the session's frames and ends with session_closed, the server's pause and resume
// reach the source, and a closed socket destroys every session opened on it.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { decodeTunnelFrame, encodeTunnelFrame } from '../modules/agent-hub/agent-protocol.js';
import { AgentStreams, type StreamHandler, type StreamPort } from './device-streams.js';

let server: WebSocketServer | undefined;
afterEach(() => server?.close());

/** A server socket and the agent's client socket to it. */
async function pair(): Promise<{ serverSide: WebSocket; agentSide: WebSocket }> {
  server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  const accepted = once(server, 'connection') as Promise<[WebSocket]>;
  const agentSide = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await once(agentSide, 'open');
  const [serverSide] = await accepted;
  return { serverSide, agentSide };
}

function handler(events: string[]): StreamHandler {
  return {
    data: (payload) => events.push(`data:${payload.toString()}`),
    pause: () => events.push('pause'),
    resume: () => events.push('resume'),
    destroy: () => events.push('destroy'),
  };
}

describe('agent device streams', () => {
  it('carry bytes both ways and end with session_closed', async () => {
    const { serverSide, agentSide } = await pair();
    const streams = new AgentStreams();
    streams.attach(agentSide);
    const events: string[] = [];
    let port!: StreamPort;
    await streams.open('pty-1', async (p) => {
      port = p;
      return handler(events);
    });
    const received: Array<string | { id: string; text: string }> = [];
    serverSide.on('message', (data, isBinary) => {
      const bytes = data as Buffer;
      if (!isBinary) return received.push(bytes.toString());
      const frame = decodeTunnelFrame(bytes)!;
      received.push({ id: frame.sessionId, text: frame.payload.toString() });
    });
    expect(streams.handleBinary(encodeTunnelFrame('pty-1', Buffer.from('ls\r')))).toBe(true);
    expect(streams.handleBinary(encodeTunnelFrame('tunnel-9', Buffer.from('x')))).toBe(false);
    expect(streams.hold('pty-1')).toBe(true);
    expect(streams.release('pty-1')).toBe(true);
    expect(port.send(Buffer.from('output'))).toBe(true);
    port.close({ exit_code: 0 });
    expect(port.send(Buffer.from('after'))).toBe(false);
    await expect.poll(() => received.length).toBe(2);
    expect(received).toEqual([{ id: 'pty-1', text: 'output' }, JSON.stringify({ type: 'session_closed', session_id: 'pty-1', exit_code: 0 })]);
    expect(events).toEqual(['data:ls\r', 'pause', 'resume']);
    expect(streams.size).toBe(0);
  });

  it('refuse a second session of the same id, leave nothing of one whose start failed, and destroy all with the socket', async () => {
    const { agentSide } = await pair();
    const streams = new AgentStreams();
    streams.attach(agentSide);
    const events: string[] = [];
    await streams.open('fsr-1', async () => handler(events));
    await expect(streams.open('fsr-1', async () => handler(events))).rejects.toThrow(/already exists/);
    await expect(
      streams.open('fsr-2', async () => {
        throw new Error('no such file');
      }),
    ).rejects.toThrow(/no such file/);
    expect(streams.size).toBe(1);
    agentSide.close();
    await once(agentSide, 'close');
    expect(events).toEqual(['destroy']);
    expect(streams.size).toBe(0);
    await expect(streams.open('fsr-3', async () => handler(events))).rejects.toThrow(/not connected/);
  });
});
