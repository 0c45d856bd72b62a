// The download's ZIP writer: what it writes reads back (names, sizes, methods, CRCs, the stored bytes
// unchanged), its announced size is its length, zip64 appears where a size needs it, and an entry whose
// data is shorter than its headers say ends the stream with an error instead of a corrupt archive.
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { constants, crc32, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { writeZip, type RawEntry } from './zip-writer.js';

const MiB = 1024 * 1024;

const entry = (name: string, data: Buffer, extra: Partial<RawEntry> = {}): RawEntry => ({
  name,
  method: 0,
  crc32: crc32(data),
  compressedSize: data.length,
  uncompressedSize: data.length,
  dosTime: 0x6000,
  dosDate: 0x5b21,
  mode: 0o100644,
  open: () => Promise.resolve(Readable.from([data])),
  ...extra,
});

async function readBack(zip: Buffer) {
  const file = await yauzl.fromBufferPromise(zip, { lazyEntries: true });
  const out = [];
  for await (const e of file.eachEntry()) {
    const raw = e.fileName.endsWith('/') ? Buffer.alloc(0) : await buffer(await file.openReadStreamPromise(e, { decodeFileData: false }));
    out.push({ name: e.fileName, method: e.compressionMethod, crc: e.crc32, size: e.uncompressedSize, raw, mode: e.externalFileAttributes >>> 16 });
  }
  return out;
}

describe('writeZip', () => {
  it('writes entries that read back unchanged, with zip64 sizes where one passes 4 GiB, in exactly the announced length', async () => {
    // 5 GiB of zeros as 5,120 copies of one sync-flushed deflate block: a few MiB to write, never inflated here.
    const block = deflateRawSync(Buffer.alloc(MiB), { level: 9, finishFlush: constants.Z_SYNC_FLUSH });
    const big = Buffer.concat([...Array.from({ length: 5 * 1024 }, () => block), Buffer.from([0x03, 0x00])]);
    const text = Buffer.from('Grüße\r\n', 'utf8');
    const entries = [
      entry('Ünïcödé/', Buffer.alloc(0), { mode: 0o040755 }),
      entry('Ünïcödé/readme.txt', text),
      entry('zeros.bin', big, { method: 8, crc32: 0x12345678, uncompressedSize: 5 * 1024 * MiB }),
    ];
    const { stream, size } = writeZip(entries);
    const zip = await buffer(stream);
    expect(zip.length).toBe(size);
    const back = await readBack(zip);
    expect(back.map(({ raw: _raw, ...rest }) => rest)).toEqual([
      { name: 'Ünïcödé/', method: 0, crc: 0, size: 0, mode: 0o040755 },
      { name: 'Ünïcödé/readme.txt', method: 0, crc: crc32(text), size: text.length, mode: 0o100644 },
      { name: 'zeros.bin', method: 8, crc: 0x12345678, size: 5 * 1024 * MiB, mode: 0o100644 },
    ]);
    expect(back[1]!.raw.equals(text)).toBe(true);
    expect(back[2]!.raw.equals(big)).toBe(true);
  });

  it('fails the stream when an entry holds fewer bytes than its headers say', async () => {
    const data = Buffer.from('only this');
    const { stream } = writeZip([entry('short.txt', data, { compressedSize: 100, uncompressedSize: 100 })]);
    await expect(buffer(stream)).rejects.toThrow(/9 bytes, its headers say 100/);
  });
});
