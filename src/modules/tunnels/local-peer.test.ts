// Which account on this server made a connection (local-peer.ts), against real sockets: the second
// account is nobody, run with setpriv, which needs root (as CI has).
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { otherAccount, tryAs, type OtherAccount } from '../../../test/helpers/other-account.js';
import { LocalPeers, type LocalUids, type PeerVerdict } from './local-peer.js';

const account = otherAccount();
const skipped = typeof account === 'string' ? account : undefined;
const nobody = account as OtherAccount;

describe.skipIf(skipped)('the owner of a connection made on this server', () => {
  /** What `peers` says about a connection `nobody` (or this process, `asSelf`) makes to a server on `listenHost`. */
  async function verdict(peers: LocalPeers, listenHost: string, connectHost: string, { asSelf = false, from }: { asSelf?: boolean; from?: string } = {}): Promise<PeerVerdict> {
    const server = net.createServer().listen(0, listenHost);
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const accepted = once(server, 'connection') as Promise<[net.Socket]>;
    const client = asSelf ? net.connect({ port, host: connectHost, localAddress: from }).on('error', () => undefined) : undefined;
    const tried = asSelf ? Promise.resolve('') : tryAs(nobody, port, connectHost, from);
    const [socket] = await accepted;
    const result = await peers.check(socket);
    socket.destroy();
    client?.destroy();
    await tried;
    await new Promise((resolve) => server.close(resolve));
    return result;
  }
  const ownOnly = () => new LocalPeers([]);
  const refusedAs = (uid: number | null) => expect.objectContaining({ allowed: false, uid });

  it('finds the account over IPv4, IPv6, and IPv4 on a dual-stack listener from either kind of socket', async () => {
    expect(await verdict(ownOnly(), '127.0.0.1', '127.0.0.1')).toEqual(refusedAs(nobody.uid));
    expect(await verdict(ownOnly(), '::1', '::1')).toEqual(refusedAs(nobody.uid));
    // A listener on :: sees ::ffff:127.0.0.1; the client's socket is IPv4 (in /proc/net/tcp) or IPv6 (tcp6).
    expect(await verdict(ownOnly(), '::', '127.0.0.1')).toEqual(refusedAs(nobody.uid));
    expect(await verdict(ownOnly(), '::', '::ffff:127.0.0.1')).toEqual(refusedAs(nobody.uid));
    expect(await verdict(ownOnly(), '::', '127.0.0.1', { asSelf: true })).toEqual({ allowed: true });
    expect(await verdict(ownOnly(), '::1', '::1', { asSelf: true })).toEqual({ allowed: true });
  });

  it('treats a connection from one of the server\'s network addresses as local too', async () => {
    const address = Object.values(os.networkInterfaces()).flat().find((a) => a && !a.internal && a.family === 'IPv4')?.address;
    if (!address) return; // no network interface besides loopback here: nothing more to show
    expect(await verdict(ownOnly(), '0.0.0.0', address)).toEqual(refusedAs(nobody.uid));
    expect(await verdict(ownOnly(), '0.0.0.0', '127.0.0.1', { from: address })).toEqual(refusedAs(nobody.uid));
  });

  it('lets in the accounts TUNNEL_LOCAL_UIDS lists, or every one with "any"', async () => {
    const peers = (uids: LocalUids) => new LocalPeers(uids);
    expect(await verdict(peers([nobody.uid]), '127.0.0.1', '127.0.0.1')).toEqual({ allowed: true });
    expect(await verdict(peers('any'), '127.0.0.1', '127.0.0.1')).toEqual({ allowed: true });
    expect(await verdict(peers([nobody.uid + 1]), '127.0.0.1', '127.0.0.1')).toEqual(refusedAs(nobody.uid));
  });

  it('refuses a connection whose socket is closed before it is looked up, although closed sockets show as uid 0 (root)', async () => {
    // Half-open allowed: the server's side stays open, as a proxy port's does while its peer is looked up.
    const server = net.createServer({ allowHalfOpen: true }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'connection') as Promise<[net.Socket]>;
    const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
    const [socket] = await accepted;
    expect([socket.localAddress, socket.remotePort]).toEqual(['127.0.0.1', client.localPort]);
    client.destroy();
    await once(socket.resume(), 'end');
    // Root is allowed here, and a connection root still held would pass (as the one above did).
    expect(await new LocalPeers([0]).check(socket)).toEqual(refusedAs(null));
    socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
});

if (skipped) {
  describe('the owner of a connection made on this server', () => {
    it.skip(`is not tried here: ${skipped}`, () => undefined);
  });
}
