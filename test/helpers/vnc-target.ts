// A VNC server stand-in for the remote-desktop tests: speaks the server's half of the RFB 3.8 handshake
// (security None, a 1×1 true-colour screen) and then records every byte the client sends, so a test can
// see exactly which client messages reached the device through the tunnel.
import type net from 'node:net';
import { TunnelTargets } from './tunnels.js';

/** The client's half of the same handshake: version, security None, ClientInit (shared). */
export const CLIENT_HANDSHAKE = Buffer.concat([Buffer.from('RFB 003.008\n'), Buffer.from([1]), Buffer.from([1])]);
/** What the server sends before the client's messages start: version, types [None], result OK, ServerInit. */
const SERVER_INIT = Buffer.concat([
  Buffer.from([0, 1, 0, 1]), // 1×1
  Buffer.from([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]), // 32 bpp true colour
  Buffer.from([0, 0, 0, 4]),
  Buffer.from('test'),
]);
export const SERVER_HANDSHAKE_BYTES = 12 + 2 + 4 + SERVER_INIT.length;

/** Client messages by their RFB layout. */
export const rfb = {
  setEncodings: () => Buffer.from([2, 0, 0, 1, 0, 0, 0, 0]),
  updateRequest: () => Buffer.from([3, 1, 0, 0, 0, 0, 0, 1, 0, 1]),
  key: (down: boolean, keysym: number) => Buffer.from([4, down ? 1 : 0, 0, 0, (keysym >>> 24) & 255, (keysym >>> 16) & 255, (keysym >>> 8) & 255, keysym & 255]),
  pointer: (buttons: number, x: number, y: number) => Buffer.from([5, buttons, x >> 8, x & 255, y >> 8, y & 255]),
};

export class VncTarget {
  readonly #targets = new TunnelTargets();
  /** The bytes each connection's client sent after its ClientInit, by connection. */
  readonly received: Buffer[][] = [];
  connections = 0;

  async listen(): Promise<number> {
    return this.#targets.listen((socket: net.Socket) => {
      socket.on('error', () => undefined);
      const mine: Buffer[] = [];
      this.received.push(mine);
      this.connections++;
      socket.write('RFB 003.008\n');
      let pending = Buffer.alloc(0);
      let stage: 'version' | 'security' | 'init' | 'messages' = 'version';
      socket.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        if (stage === 'version' && pending.length >= 12) {
          pending = pending.subarray(12);
          socket.write(Buffer.from([1, 1])); // one security type: None
          stage = 'security';
        }
        if (stage === 'security' && pending.length >= 1) {
          pending = pending.subarray(1);
          socket.write(Buffer.from([0, 0, 0, 0])); // SecurityResult OK
          stage = 'init';
        }
        if (stage === 'init' && pending.length >= 1) {
          pending = pending.subarray(1);
          socket.write(SERVER_INIT);
          stage = 'messages';
        }
        if (stage === 'messages' && pending.length > 0) {
          mine.push(pending);
          pending = Buffer.alloc(0);
        }
      });
    });
  }

  close(): Promise<void> {
    return this.#targets.close();
  }
}
