// The hub's device streams: frames and ends reach the stream's sink only from its own agent, and every
// stream of an agent ends when its socket goes.
import { describe, expect, it } from 'vitest';
import { encodeTunnelFrame } from './agent-protocol.js';
import { DeviceStreams, type StreamSink } from './device-streams.js';

function recordingSink() {
  const seen: string[] = [];
  const sink: StreamSink = {
    data: (payload) => seen.push(`data:${payload.toString()}`),
    closed: (frame) => seen.push(`closed:${frame.exit_code ?? ''}${frame.error ?? ''}`),
    gone: () => seen.push('gone'),
  };
  return { seen, sink };
}

function transport() {
  const sent: Array<{ agentId: string; header: Buffer; payload: Buffer }> = [];
  return {
    sent,
    connected: true,
    sendBinary(agentId: string, header: Buffer, payload: Buffer) {
      if (!this.connected) return false;
      sent.push({ agentId, header, payload });
      return true;
    },
    bufferedAmount: () => 0,
    whenDrained: (_agentId: string, resume: () => void) => resume(),
  };
}

describe('device streams', () => {
  it('route an agent\'s frames and session_closed to the stream it opened, not another agent\'s', () => {
    const streams = new DeviceStreams(transport());
    const { seen, sink } = recordingSink();
    const stream = streams.open('agent-a', 'pty', sink);
    expect(stream.id).toMatch(/^pty-[0-9a-f]{24}$/);
    expect(streams.binary('agent-b', encodeTunnelFrame(stream.id, Buffer.from('forged')))).toBe(false);
    expect(streams.binary('agent-a', encodeTunnelFrame(stream.id, Buffer.from('hello')))).toBe(true);
    expect(streams.closed('agent-b', { type: 'session_closed', session_id: stream.id, exit_code: 9 })).toBe(false);
    expect(streams.closed('agent-a', { type: 'session_closed', session_id: stream.id, exit_code: 0 })).toBe(true);
    expect(streams.binary('agent-a', encodeTunnelFrame(stream.id, Buffer.from('late')))).toBe(false);
    expect(seen).toEqual(['data:hello', 'closed:0']);
    expect(streams.size).toBe(0);
  });

  it('cut what is sent into frames of at most 256 KiB, and say false once the agent is gone', () => {
    const t = transport();
    const streams = new DeviceStreams(t);
    const stream = streams.open('agent-a', 'fsw', recordingSink().sink);
    expect(stream.send(Buffer.alloc(600 * 1024, 1))).toBe(true);
    expect(t.sent.map((s) => s.payload.length)).toEqual([256 * 1024, 256 * 1024, 88 * 1024]);
    expect(t.sent.every((s) => s.header.subarray(1).toString() === stream.id)).toBe(true);
    t.connected = false;
    expect(stream.send(Buffer.from('x'))).toBe(false);
  });

  it('end every stream of an agent when its socket goes, and none of the others', () => {
    const streams = new DeviceStreams(transport());
    const a = recordingSink();
    const b = recordingSink();
    streams.open('agent-a', 'pty', a.sink);
    streams.open('agent-a', 'fsr', a.sink);
    streams.open('agent-b', 'pty', b.sink);
    streams.agentGone('agent-a');
    expect(a.seen).toEqual(['gone', 'gone']);
    expect(b.seen).toEqual([]);
    streams.stopAll();
    expect(b.seen).toEqual(['gone']);
    expect(streams.size).toBe(0);
  });

  it('forget a released stream', () => {
    const streams = new DeviceStreams(transport());
    const { seen, sink } = recordingSink();
    const stream = streams.open('agent-a', 'pty', sink);
    stream.release();
    expect(streams.binary('agent-a', encodeTunnelFrame(stream.id, Buffer.from('x')))).toBe(false);
    streams.agentGone('agent-a');
    expect(seen).toEqual([]);
  });
});
