// A free TCP port on 127.0.0.1 for a process a test or benchmark starts (the kernel picks it; it is
// closed again at once, so another process could take it first, which is rare enough on one machine).
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
