// The backup file's parts and their checksums (issue 57). A backup records the SHA-256 and size of every
// part in its manifest; a restore reads the whole file into a staging directory, checking each part
// against the manifest and against the ZIP's own CRC-32, before it touches the database, the blobs or
// the secrets. yauzl does not check CRC-32 by itself, so a damaged byte used to reach pg_restore (or a
// blob file) unnoticed.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl from 'yauzl';

/** One part of the archive as the manifest records it. */
export interface Part {
  sha256: string;
  size: number;
}

/** Only the names a backup writes: nothing else is read, so nothing can land outside the staging directory. */
const PART_NAME = /^(secrets(\.sealed)?\.json|database\/(postgres\.dump|pglite\.tar\.gz|logical\.json|tables\/[a-z0-9_]+\.copy)|blobs\/[0-9a-f]{64})$/;
export const MANIFEST_ENTRY = 'manifest.json';
/** Authenticated by its own AES-GCM tag, and it carries the manifest's SHA-256 (backup-secrets.ts). */
export const SEALED_ENTRY = 'secrets.sealed.json';

/** The archive is damaged or altered; nothing was restored. */
export class DamagedBackupError extends Error {
  constructor(detail: string) {
    super(`the backup is damaged: ${detail}; nothing was restored`);
    this.name = 'DamagedBackupError';
  }
}

export const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** A pass-through that measures what flows through it: `part()` once it ended, and the CRC-32 the ZIP records. */
export function measuring(): { stream: Transform; part: () => Part; crc32: () => number } {
  const hash = createHash('sha256');
  let size = 0;
  let crc = 0;
  let digest = '';
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      crc = crc32(chunk, crc);
      size += chunk.length;
      done(null, chunk);
    },
    flush(done) {
      digest = hash.digest('hex');
      done();
    },
  });
  return { stream, part: () => ({ sha256: digest, size }), crc32: () => crc };
}

export async function measureFile(file: string): Promise<Part> {
  const { stream, part } = measuring();
  await pipeline(createReadStream(file), stream, async (source: AsyncIterable<Buffer>) => {
    for await (const _ of source); // drained: only the measure is wanted
  });
  return part();
}

export const measureBuffer = (data: Buffer): Part => ({ sha256: sha256(data), size: data.length });

/**
 * Every entry name (the ZIP's central directory), and the bytes of the manifest and the sealed secrets:
 * small, read first, so that a wrong passphrase is said before the bulk is read.
 */
export async function readIndex(file: string): Promise<{ manifest: Buffer | undefined; sealed: Buffer | undefined; names: Set<string> }> {
  const zip = await openZip(file);
  const names = new Set<string>();
  const small = new Map<string, Buffer>();
  try {
    for await (const entry of zip.eachEntry()) {
      // A second entry of one name would be restored in place of the first, which the manifest vouches for.
      if (names.has(entry.fileName)) throw new DamagedBackupError(`it holds ${entry.fileName} twice`);
      names.add(entry.fileName);
      if (entry.fileName === MANIFEST_ENTRY || entry.fileName === SEALED_ENTRY) {
        await readEntry(zip, entry, async (source) => {
          small.set(entry.fileName, await buffer(source));
        });
      }
    }
  } finally {
    zip.close();
  }
  return { manifest: small.get(MANIFEST_ENTRY), sealed: small.get(SEALED_ENTRY), names };
}

/**
 * Extracts every part into `staging` (same relative names), checking each against the ZIP's CRC-32 and,
 * when `parts` is given (a manifest of version 2), against its SHA-256 and size; a part the manifest
 * lists must be there, and a part it does not list is refused. Returns the parts extracted.
 */
export async function extractVerified(file: string, staging: string, parts: Record<string, Part> | undefined): Promise<Set<string>> {
  const zip = await openZip(file);
  const extracted = new Set<string>();
  try {
    for await (const entry of zip.eachEntry()) {
      const name = entry.fileName;
      if (name === MANIFEST_ENTRY || !PART_NAME.test(name)) continue;
      const expected = parts?.[name];
      if (parts && !expected && name !== SEALED_ENTRY) throw new DamagedBackupError(`it holds ${name}, which its manifest does not list`);
      const target = path.join(staging, name);
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      await readEntry(zip, entry, (source) => pipeline(source, createWriteStream(target, { mode: 0o600 })), expected);
      extracted.add(name);
    }
  } finally {
    zip.close();
  }
  const missing = Object.keys(parts ?? {}).filter((name) => !extracted.has(name));
  if (missing.length > 0) throw new DamagedBackupError(`${missing.join(', ')} listed in its manifest ${missing.length === 1 ? 'is' : 'are'} missing`);
  return extracted;
}

async function openZip(file: string): Promise<yauzl.ZipFile> {
  try {
    return await yauzl.openPromise(file, { lazyEntries: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code) throw err; // not found, not readable: said as it is
    throw new DamagedBackupError(`${file} is not a readable ZIP file (${(err as Error).message})`);
  }
}

/**
 * Streams one entry through `sink`, comparing it with its checksum in the manifest (`expected`), then
 * with the ZIP's CRC-32. Read errors (a damaged deflate stream, a wrong length) name the part; the file
 * system's own (ENOSPC) are said as they are.
 */
async function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, sink: (source: Readable) => Promise<unknown>, expected?: Part): Promise<void> {
  const { stream, part, crc32: crc } = measuring();
  try {
    const source = await zip.openReadStreamPromise(entry);
    await Promise.all([pipeline(source, stream), sink(stream)]);
  } catch (err) {
    if (/^E[A-Z]+$/.test(String((err as NodeJS.ErrnoException).code))) throw err;
    throw new DamagedBackupError(`${entry.fileName} cannot be read (${(err as Error).message})`);
  }
  const got = part();
  if (expected && (got.sha256 !== expected.sha256 || got.size !== expected.size)) {
    throw new DamagedBackupError(`${entry.fileName} does not match its checksum in the manifest (SHA-256 ${got.sha256}, ${got.size} bytes; the manifest says ${expected.sha256}, ${expected.size} bytes)`);
  }
  if (crc() >>> 0 !== entry.crc32 >>> 0) throw new DamagedBackupError(`${entry.fileName} does not match the ZIP's CRC-32`);
}
