// A tunnel frame sent in two parts reaches a real `ws` client as the one binary message it would have
// been joined, at every frame-length encoding, in order with messages `ws` sent itself, and behind a
// message `ws` still holds back (a Blob being read), where writing past `ws` would have reordered them.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { sendTwoParts } from './two-part-send.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The server's end of a real socket (what the hub sends on) and what its client received, in order. */
async function pair() {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  const received: Array<{ data: Buffer; binary: boolean }> = [];
  client.on('message', (data: Buffer, binary) => received.push({ data, binary }));
  const [server] = await accepted;
  cleanups.push(async () => {
    client.terminate();
    server.terminate();
    await new Promise((resolve) => wss.close(resolve));
  });
  return { server, received };
}

describe('sendTwoParts', () => {
  it('arrives as one binary message equal to header + payload, for every length encoding', async () => {
    const { server, received } = await pair();
    const header = Buffer.from([24, ...Buffer.from('a'.repeat(24))]);
    // Whole message lengths 100, 125, 126, 65535, 65536 and beyond: the 7-bit, 16-bit and 64-bit forms.
    const payloads = [75, 100, 101, 65_510, 65_511, 256 * 1024].map((n) => randomBytes(n));
    const callbacks: Array<Error | null | undefined> = [];
    for (const payload of payloads) sendTwoParts(server, header, payload, (err) => callbacks.push(err));
    await vi.waitFor(() => expect(received).toHaveLength(payloads.length));
    received.forEach((message, i) => {
      expect(message.binary).toBe(true);
      expect(message.data.equals(Buffer.concat([header, payloads[i]!])), `message ${i}`).toBe(true);
    });
    await vi.waitFor(() => expect(callbacks).toHaveLength(payloads.length));
    expect(callbacks.every((err) => !err)).toBe(true);
  });

  it('keeps its place among messages sent through ws, also behind one ws still holds back', async () => {
    const { server, received } = await pair();
    const header = Buffer.from([1, 0x73]);
    server.send('first');
    sendTwoParts(server, header, Buffer.from('second'), () => undefined);
    // ws reads a Blob asynchronously and queues whatever is sent meanwhile.
    server.send(new Blob([Buffer.from('third')]) as unknown as Buffer);
    sendTwoParts(server, header, Buffer.from('fourth'), () => undefined);
    server.send('fifth');
    await vi.waitFor(() => expect(received).toHaveLength(5));
    expect(received.map((m) => m.data.toString())).toEqual(['first', '\u0001ssecond', 'third', '\u0001sfourth', 'fifth']);
  });
});
