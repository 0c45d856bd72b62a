import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { procAddress } from './proc-net-tcp.js';
import { bytesAcknowledged } from './tcp-acked.js';

describe.runIf(os.endianness() === 'LE')('procAddress', () => {
  it('prints addresses the way /proc/net/tcp and tcp6 do on little-endian machines', () => {
    expect(procAddress('127.0.0.1', 80)).toBe('0100007F:0050');
    expect(procAddress('10.1.2.3', 54321)).toBe('0302010A:D431');
    expect(procAddress('::1', 1)).toBe('00000000000000000000000001000000:0001');
    expect(procAddress('::ffff:127.0.0.1', 10000)).toBe('0000000000000000FFFF00000100007F:2710');
    expect(procAddress('2001:db8::5', 443)).toBe('B80D0120000000000000000005000000:01BB');
  });
});

/** Writes 8 MiB to a client that reads nothing, then resets it: what the client then reads is what was acknowledged. */
async function resetAfterStall(host: string): Promise<{ acknowledged: number | null; received: number; ended: string; handed: number }> {
  const server = net.createServer();
  server.listen(0, host);
  await once(server, 'listening');
  let received = 0;
  // One-byte reads: Node 20's libuv would report the reset as EOF after a short last read (see test/helpers/tunnels.ts).
  const client = net.connect({ port: (server.address() as AddressInfo).port, host, onread: { buffer: Buffer.alloc(1), callback: (n) => ((received += n), true) } });
  client.pause();
  const [socket] = (await once(server, 'connection')) as [net.Socket];
  const chunk = Buffer.alloc(1024 * 1024, 1);
  for (let i = 0; i < 8; i++) socket.write(chunk);
  let last = -1;
  await vi.waitFor(
    () => {
      const now = socket.writableLength;
      const stable = now === last;
      last = now;
      expect(stable).toBe(true);
    },
    { timeout: 10_000, interval: 100 },
  );
  const acknowledged = await bytesAcknowledged(socket);
  const handed = 8 * 1024 * 1024 - socket.writableLength;
  socket.resetAndDestroy();
  const ended = new Promise<string>((resolve) => {
    client.on('end', () => resolve('EOF'));
    client.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
  client.resume();
  const how = await ended;
  server.close();
  return { acknowledged, received, ended: how, handed };
}

const hasIpv6Loopback = Object.values(os.networkInterfaces()).some((list) => list?.some((i) => i.address === '::1'));

describe.runIf(process.platform === 'linux')('bytesAcknowledged', () => {
  it('is exactly what a reset IPv4 client still gets, less than what was handed to the kernel', async () => {
    const r = await resetAfterStall('127.0.0.1');
    expect(r.ended).toBe('ECONNRESET');
    expect(r.acknowledged).toBe(r.received);
    expect(r.received).toBeGreaterThan(0);
    expect(r.received).toBeLessThan(r.handed);
  });

  it.runIf(hasIpv6Loopback)('also over IPv6', async () => {
    const r = await resetAfterStall('::1');
    expect(r.ended).toBe('ECONNRESET');
    expect(r.acknowledged).toBe(r.received);
  });
});
