// Linux's table of TCP sockets (/proc/net/tcp for IPv4, /proc/net/tcp6 for IPv6 and IPv4-mapped), read
// for particular sockets: how many bytes a client has not acknowledged (tcp-acked.ts), and which account
// owns the other end of a connection made on this server (local-peer.ts). The table lists every socket
// of the network namespace (1.5 MiB and tens of ms of kernel time for 10,000 sockets), so it is read in
// pieces and only until the rows sought are found.
import { open } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';

/** The columns used here, by index, of a row split on whitespace. */
export const COLUMN = { local: 1, remote: 2, queues: 4, uid: 7, inode: 9 } as const;

const CHUNK_BYTES = 64 * 1024;

/** How a socket's row is found: its local and remote address (procAddress form), "LOCAL REMOTE". */
export function rowKey(local: string, remote: string): string {
  return `${local} ${remote}`;
}

/**
 * Reads the table once, calling `visit` with the key and the columns of every row whose key `wanted`
 * has, until `visit` returns true (all found) or the table ends. Throws when the table cannot be read
 * (not Linux, /proc not mounted).
 */
export async function scanTcpTable(v6: boolean, wanted: { has(key: string): boolean }, visit: (key: string, fields: string[]) => boolean): Promise<void> {
  // "  sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when retrnsmt   uid  timeout inode ..."
  // Addresses have a fixed width: 8 (IPv4) or 32 (IPv6) hex digits, a colon, 4 for the port.
  const keyLength = 2 * ((v6 ? 32 : 8) + 5) + 1;
  const file = await open(v6 ? '/proc/net/tcp6' : '/proc/net/tcp', 'r');
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    let carry = '';
    for (;;) {
      const { bytesRead } = await file.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) return;
      const lines = (carry + buffer.toString('latin1', 0, bytesRead)).split('\n');
      carry = lines.pop()!;
      for (const line of lines) {
        const start = line.indexOf(': ') + 2;
        const key = line.slice(start, start + keyLength);
        if (wanted.has(key) && visit(key, line.trim().split(/\s+/))) return;
      }
    }
  } finally {
    await file.close();
  }
}

/** The first row (split into its columns) of the socket local → remote that `accept` takes, or null. */
export async function findTcpRow(v6: boolean, local: string, remote: string, accept: (fields: string[]) => boolean = () => true): Promise<string[] | null> {
  let row: string[] | null = null;
  await scanTcpTable(v6, new Set([rowKey(local, remote)]), (_key, fields) => accept(fields) && (row = fields) !== null);
  return row;
}

/** An address and port as /proc/net/tcp{,6} prints them: 32-bit words in host byte order, in hex. */
export function procAddress(address: string, port: number): string {
  const bytes = net.isIPv4(address) ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
  let hex = '';
  for (let i = 0; i < bytes.length; i += 4) {
    const word = [...bytes.subarray(i, i + 4)];
    if (os.endianness() === 'LE') word.reverse();
    hex += Buffer.from(word).toString('hex');
  }
  return `${hex.toUpperCase()}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
}

function ipv6Bytes(address: string): Buffer {
  let text = address.replace(/%.*$/, '');
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const bytes = Buffer.alloc(16);
  groups.forEach((group, i) => bytes.writeUInt16BE(Number.parseInt(group, 16), i * 2));
  return bytes;
}
