// The bytes the agents' connections carry, counted outside the server: a TCP relay on loopback between
// the fleet and the server, counting what passes each way. The same bytes the server's sockets read
// and wrote (HTTP headers and bodies, WebSocket frames and pings; no TCP/IP headers or TLS, the bench
// runs plain HTTP); the relay's own CPU is the bench's, not the server's.
import net from 'node:net';
import type { Traffic } from './capacity-probes.js';

export interface CountingProxy {
  /** http://127.0.0.1:<port>: give this to the fleet instead of the server's URL. */
  url: string;
  /** Bytes the server received (bytesIn) and sent (bytesOut) through the relay so far. */
  traffic(): Traffic;
  close(): Promise<void>;
}

export async function countingProxy(serverUrl: string): Promise<CountingProxy> {
  const target = new URL(serverUrl);
  const counted: Traffic = { bytesIn: 0, bytesOut: 0 };
  const open = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    const server = net.connect(Number(target.port), target.hostname);
    for (const socket of [client, server]) {
      open.add(socket);
      socket.once('close', () => open.delete(socket));
      // Either side closing or failing ends the pair, as a direct connection would end.
      socket.once('error', () => (client.destroy(), server.destroy()));
    }
    client.on('data', (chunk: Buffer) => void (counted.bytesIn += chunk.length));
    server.on('data', (chunk: Buffer) => void (counted.bytesOut += chunk.length));
    client.pipe(server);
    server.pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port } = relay.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    traffic: () => ({ ...counted }),
    close: async () => {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    },
  };
}
