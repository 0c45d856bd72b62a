// Who gets through a tunnel's proxy port (the port has no credentials of its own): a connection from an
// address outside the tunnel's allow_from is reset at once; one from the server itself also needs an
// allowed account (local-peer.ts), and is not read until that is known. Every refusal is counted on its
// tunnel and logged, at most once a minute per tunnel and kind with a count, so a scan cannot flood the
// log. Refusals are not audited: the audit log records what signed-in callers did, and anyone who can
// reach the port could fill it at will.
import type net from 'node:net';
import { LogThrottle } from '../../platform/log-throttle.js';
import type { Logger } from '../../platform/logger.js';
import { normalizeAddress, type AllowList } from './allow-list.js';
import { LocalPeers, type LocalUids } from './local-peer.js';

/** The part of a tunnel (tunnel-manager.ts) the gate reads, and its refusal count, which it raises. */
export interface GatedTunnel {
  readonly id: string;
  readonly agentId: string;
  readonly allowFrom: AllowList;
  refused: number;
}

export class ProxyPortGate {
  readonly #localPeers: LocalPeers;
  readonly #refusals: LogThrottle;

  constructor(logger: Logger, localUids: LocalUids) {
    this.#localPeers = new LocalPeers(localUids);
    this.#refusals = new LogThrottle(logger);
  }

  /** Calls `admit` once the connection may become a session of `tunnel` (still open: `isOpen`); resets it otherwise. */
  screen(tunnel: GatedTunnel, socket: net.Socket, admit: () => void, isOpen: () => boolean): void {
    const from = normalizeAddress(socket.remoteAddress ?? '');
    socket.on('error', () => undefined);
    if (!tunnel.allowFrom.allows(from)) {
      const fields = { from, allowFrom: tunnel.allowFrom.entries };
      return this.#refuse(tunnel, socket, 'refused', fields, 'tunnel proxy port refused a connection from an address outside its allow_from');
    }
    socket.pause();
    void this.#localPeers.check(socket).then((verdict) => {
      if (socket.destroyed || !isOpen()) socket.destroy();
      else if (verdict.allowed) admit();
      else {
        const fields = { from, uid: verdict.uid, why: verdict.why };
        this.#refuse(tunnel, socket, 'refused-local', fields, 'tunnel proxy port refused a connection from another account on this server');
      }
    });
  }

  flush(): void {
    this.#refusals.flush();
  }

  #refuse(tunnel: GatedTunnel, socket: net.Socket, kind: string, fields: object, message: string): void {
    tunnel.refused++;
    socket.resetAndDestroy(); // an RST, not a FIN: the client learns at once that it was refused
    this.#refusals.warn(`${kind} ${tunnel.id}`, { tunnelId: tunnel.id, agentId: tunnel.agentId, ...fields, refused: tunnel.refused }, message);
  }
}
