// Which account on this server is on the other end of a proxy port connection. A proxy port has no
// credentials of its own, and allow_from can only tell hosts apart: every account on the server
// connects from 127.0.0.1 (or from any other address of the server). So a connection from one of the
// server's own addresses is let in only when the socket that made it belongs to the server's own
// account, or to one listed in TUNNEL_LOCAL_UIDS. Linux shows each socket's owner in the uid column of
// /proc/net/tcp{,6}; the connecting socket is the row whose local address is our peer's and whose
// remote address is ours. Where that cannot be read (not Linux, /proc not mounted) nobody on the server
// is let in unless TUNNEL_LOCAL_UIDS=any says every local account may. Connections from other hosts
// never cost a look at the table (allow_from alone decides for them), so only accounts already on the
// server can make the server read it.
import net from 'node:net';
import os from 'node:os';
import { normalizeAddress } from './allow-list.js';
import { COLUMN, procAddress, rowKey, scanTcpTable } from './proc-net-tcp.js';

/** Accounts besides the server's own that may connect from the server itself, or 'any' (the old behaviour). */
export type LocalUids = 'any' | readonly number[];

export type PeerVerdict = { allowed: true } | { allowed: false; uid: number | null; why: string };

export class LocalPeers {
  readonly #allowed: ReadonlySet<number> | 'any';
  readonly #owners = new SocketOwners();

  /**
   * `whereUnknown`: what a local connection gets where owners cannot be read. The server refuses it;
   * `tunnel connect` on a technician's Windows or macOS machine lets it in (there is no other way to use it).
   */
  constructor(
    extra: LocalUids,
    ownUid: number | undefined = process.geteuid?.(),
    private readonly whereUnknown: 'refuse' | 'allow' = 'refuse',
  ) {
    this.#allowed = extra === 'any' ? 'any' : new Set([...extra, ...(ownUid === undefined ? [] : [ownUid])]);
  }

  /** Whether the peer of `socket` (accepted on a proxy port) may use it as far as local accounts go; never rejects. */
  async check(socket: net.Socket): Promise<PeerVerdict> {
    if (this.#allowed === 'any') return { allowed: true };
    const peer = normalizeAddress(socket.remoteAddress ?? '');
    const us = normalizeAddress(socket.localAddress ?? '');
    const { remotePort, localPort } = socket;
    if (!peer || !us || remotePort === undefined || localPort === undefined) return refused(null, 'the connection was already closed');
    if (!isOwnAddress(peer, us)) return { allowed: true };
    // The connecting socket's row: local end = our peer, remote end = us. An IPv4 peer may have connected
    // from an IPv4 socket (listed in tcp) or from an IPv6 one with the IPv4-mapped address (in tcp6).
    const v4 = net.isIPv4(peer);
    const uid = await this.#owners.owner({
      v4: v4 ? rowKey(procAddress(peer, remotePort), procAddress(us, localPort)) : undefined,
      v6: v4 ? rowKey(procAddress(`::ffff:${peer}`, remotePort), procAddress(`::ffff:${us}`, localPort)) : rowKey(procAddress(peer, remotePort), procAddress(us, localPort)),
    });
    if (uid === undefined && this.whereUnknown === 'allow') return { allowed: true };
    if (uid === undefined) return refused(null, 'this system does not show which account a connection belongs to (no /proc/net/tcp); TUNNEL_LOCAL_UIDS=any lets every local account in');
    if (uid === null) return refused(null, 'its socket is not among this machine\'s open sockets (closed already, or translated by NAT)');
    return this.#allowed.has(uid) ? { allowed: true } : refused(uid, 'the connecting socket belongs to another account on this machine');
  }
}

function refused(uid: number | null, why: string): PeerVerdict {
  return { allowed: false, uid, why };
}

/** A loopback address, an address of one of this server's interfaces, or the address the connection reached. */
function isOwnAddress(peer: string, us: string): boolean {
  if (peer === us || peer === '::1' || (net.isIPv4(peer) && peer.startsWith('127.'))) return true;
  return Object.values(os.networkInterfaces()).some((addresses) => addresses?.some((a) => normalizeAddress(a.address) === peer));
}

interface Lookup {
  keys: { v4: string | undefined; v6: string };
  /** Whether a table this socket could be listed in was read. */
  readable: boolean;
  retried: boolean;
  done: boolean;
  resolve(uid: number | null | undefined): void;
}

/**
 * Owners of sockets by their rows, looked up in batches: one pass over the tables answers every lookup
 * waiting when it starts, so a burst of local connections costs one or two passes, and at most one
 * read of the table is in flight (file reads share libuv's four threads with bcrypt and the rest).
 * A row not found is sought once more in the next pass: the kernel lists the table a piece at a time
 * while sockets come and go, and a row can be skipped when the table changes between two pieces.
 */
class SocketOwners {
  #waiting: Lookup[] = [];
  #scanning = false;

  /** The uid owning the live socket with these keys; null when it is not listed, undefined when no table can be read. */
  owner(keys: Lookup['keys']): Promise<number | null | undefined> {
    return new Promise((resolve) => {
      this.#waiting.push({ keys, readable: false, retried: false, done: false, resolve });
      if (!this.#scanning) void this.#run();
    });
  }

  async #run(): Promise<void> {
    this.#scanning = true;
    try {
      while (this.#waiting.length > 0) {
        const batch = this.#waiting.splice(0);
        await this.#pass(batch, false);
        await this.#pass(batch, true);
        for (const lookup of batch) {
          if (lookup.done) continue;
          if (lookup.readable && !lookup.retried) {
            lookup.retried = true;
            this.#waiting.push(lookup);
          } else lookup.resolve(lookup.readable ? null : undefined);
        }
      }
    } finally {
      this.#scanning = false;
    }
  }

  /** One read of tcp or tcp6 for the lookups of `batch` not answered yet. */
  async #pass(batch: Lookup[], v6: boolean): Promise<void> {
    const sought = new Map<string, Lookup>();
    for (const lookup of batch) {
      const key = v6 ? lookup.keys.v6 : lookup.keys.v4;
      if (!lookup.done && key) sought.set(key, lookup);
    }
    if (sought.size === 0) return;
    const lookups = [...sought.values()];
    try {
      await scanTcpTable(v6, sought, (key, fields) => {
        // Inode 0: a socket no process holds any more (closed, TIME_WAIT), which the kernel lists as uid 0,
        // not to be taken for root.
        const uid = Number(fields[COLUMN.uid]);
        if (fields[COLUMN.inode] === '0' || !Number.isInteger(uid)) return false;
        const lookup = sought.get(key)!;
        sought.delete(key);
        lookup.done = true;
        lookup.resolve(uid);
        return sought.size === 0;
      });
      for (const lookup of lookups) lookup.readable = true;
    } catch {
      // This table cannot be read (tcp6 is missing where IPv6 is disabled); the other may answer.
    }
  }
}
