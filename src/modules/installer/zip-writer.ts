// Writes a ZIP archive from entries whose data is already in its final form (stored, or deflated as
// uploaded), so an installer download copies the package's compressed bytes as they are: the work per
// download follows the package's size on disk, never what it unpacks to, and the archive's length is
// known before its first byte. Every header is written here from checked values; zip64 fields only
// where a size or offset needs them (APPNOTE 6.3.10, 4.5.3).
import { once } from 'node:events';
import { PassThrough, type Readable, type Writable } from 'node:stream';

export interface RawEntry {
  /** `/`-separated; folders end with `/` and have no data. */
  name: string;
  /** 0 stored, 8 deflated: how `open()`'s bytes are encoded. */
  method: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  /** MS-DOS time and date, as the headers hold them. */
  dosTime: number;
  dosDate: number;
  /** Unix type and permission bits, for Unix extractors. */
  mode: number;
  /** The data as stored, exactly `compressedSize` bytes. */
  open(): Promise<Readable>;
}

export interface ZipOutput {
  stream: Readable;
  /** Bytes the stream will carry. */
  size: number;
}

const MAX32 = 0xffffffff;
const MAX16 = 0xffff;
const UTF8_NAMES = 0x0800;
const MADE_BY_UNIX = 3 << 8;
const MSDOS_DIRECTORY = 0x10;

interface Placed {
  entry: RawEntry;
  name: Buffer;
  offset: number;
}

/** The archive of `entries` in order. Errors (a short or failing entry) destroy the stream; so does its consumer going away. */
export function writeZip(entries: readonly RawEntry[]): ZipOutput {
  const placed: Placed[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    placed.push({ entry, name, offset });
    offset += localHeader(entry, name).length + entry.compressedSize;
  }
  const central = Buffer.concat(placed.map(centralHeader));
  const end = endRecords(placed.length, central.length, offset);
  const stream = new PassThrough();
  void (async () => {
    for (const p of placed) {
      await write(stream, localHeader(p.entry, p.name));
      if (p.entry.compressedSize > 0) await copy(await p.entry.open(), stream, p.entry.compressedSize);
    }
    await write(stream, Buffer.concat([central, end]));
    stream.end();
  })().catch((err: Error) => stream.destroy(err));
  return { stream, size: offset + central.length + end.length };
}

const needsZip64Sizes = (e: RawEntry) => e.compressedSize >= MAX32 || e.uncompressedSize >= MAX32;

function localHeader(e: RawEntry, name: Buffer): Buffer {
  const zip64 = needsZip64Sizes(e);
  // In a local header, zip64 sizes come as a pair: both in the extra field, both 0xFFFFFFFF in place.
  const extra = zip64 ? zip64Extra([e.uncompressedSize, e.compressedSize]) : Buffer.alloc(0);
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(zip64 ? 45 : 20, 4);
  header.writeUInt16LE(UTF8_NAMES, 6);
  header.writeUInt16LE(e.method, 8);
  header.writeUInt16LE(e.dosTime, 10);
  header.writeUInt16LE(e.dosDate, 12);
  header.writeUInt32LE(e.crc32 >>> 0, 14);
  header.writeUInt32LE(zip64 ? MAX32 : e.compressedSize, 18);
  header.writeUInt32LE(zip64 ? MAX32 : e.uncompressedSize, 22);
  header.writeUInt16LE(name.length, 26);
  header.writeUInt16LE(extra.length, 28);
  return Buffer.concat([header, name, extra]);
}

function centralHeader({ entry: e, name, offset }: Placed): Buffer {
  // In the directory, only the fields that do not fit move to the extra field, in this order.
  const wide = [e.uncompressedSize >= MAX32, e.compressedSize >= MAX32, offset >= MAX32];
  const extra = wide.some(Boolean) ? zip64Extra([e.uncompressedSize, e.compressedSize, offset].filter((_, i) => wide[i])) : Buffer.alloc(0);
  const version = wide.some(Boolean) || needsZip64Sizes(e) ? 45 : 20;
  const header = Buffer.alloc(46);
  header.writeUInt32LE(0x02014b50, 0);
  header.writeUInt16LE(MADE_BY_UNIX | version, 4);
  header.writeUInt16LE(version, 6);
  header.writeUInt16LE(UTF8_NAMES, 8);
  header.writeUInt16LE(e.method, 10);
  header.writeUInt16LE(e.dosTime, 12);
  header.writeUInt16LE(e.dosDate, 14);
  header.writeUInt32LE(e.crc32 >>> 0, 16);
  header.writeUInt32LE(wide[1] ? MAX32 : e.compressedSize, 20);
  header.writeUInt32LE(wide[0] ? MAX32 : e.uncompressedSize, 24);
  header.writeUInt16LE(name.length, 28);
  header.writeUInt16LE(extra.length, 30);
  // comment length, disk number start, internal attributes: 0
  header.writeUInt32LE(((e.mode << 16) | (e.name.endsWith('/') ? MSDOS_DIRECTORY : 0)) >>> 0, 38);
  header.writeUInt32LE(wide[2] ? MAX32 : offset, 42);
  return Buffer.concat([header, name, extra]);
}

function zip64Extra(values: number[]): Buffer {
  const extra = Buffer.alloc(4 + 8 * values.length);
  extra.writeUInt16LE(0x0001, 0);
  extra.writeUInt16LE(8 * values.length, 2);
  values.forEach((v, i) => extra.writeBigUInt64LE(BigInt(v), 4 + 8 * i));
  return extra;
}

/** End of central directory, preceded by the zip64 record and locator when a count or offset needs them. */
function endRecords(count: number, centralSize: number, centralOffset: number): Buffer {
  const zip64 = count >= MAX16 || centralSize >= MAX32 || centralOffset >= MAX32;
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(zip64 ? MAX16 : count, 8);
  end.writeUInt16LE(zip64 ? MAX16 : count, 10);
  end.writeUInt32LE(zip64 ? MAX32 : centralSize, 12);
  end.writeUInt32LE(zip64 ? MAX32 : centralOffset, 16);
  if (!zip64) return end;
  const record = Buffer.alloc(56);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4); // size of the rest of this record
  record.writeUInt16LE(MADE_BY_UNIX | 45, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(BigInt(count), 24);
  record.writeBigUInt64LE(BigInt(count), 32);
  record.writeBigUInt64LE(BigInt(centralSize), 40);
  record.writeBigUInt64LE(BigInt(centralOffset), 48);
  const locator = Buffer.alloc(20);
  locator.writeUInt32LE(0x07064b50, 0);
  locator.writeBigUInt64LE(BigInt(centralOffset + centralSize), 8);
  locator.writeUInt32LE(1, 16); // total number of disks
  return Buffer.concat([record, locator, end]);
}

async function write(out: Writable, chunk: Buffer): Promise<void> {
  if (out.destroyed) throw new Error('the download was closed');
  if (!out.write(chunk)) await drained(out);
}

/** Waits for room in `out`, or fails when it is closed first (the client went away). */
async function drained(out: Writable): Promise<void> {
  const ac = new AbortController();
  try {
    await Promise.race([once(out, 'drain', { signal: ac.signal }), once(out, 'close', { signal: ac.signal }).then(() => Promise.reject(new Error('the download was closed')))]);
  } finally {
    ac.abort();
  }
}

/** Copies exactly `expected` bytes of `source` into `out`; fewer or more is an error (the blob changed under us). */
async function copy(source: Readable, out: Writable, expected: number): Promise<void> {
  let copied = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      copied += chunk.length;
      if (copied > expected) break;
      await write(out, chunk);
    }
  } finally {
    source.destroy();
  }
  if (copied !== expected) throw new Error(`an entry's stored data is ${copied} bytes, its headers say ${expected}`);
}
