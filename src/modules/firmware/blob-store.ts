// Binaries on disk, named by their SHA-256 (firmware and installer packages). An upload streams into a
// temporary file in the same directory while it is hashed and counted, and only a complete one is
// renamed into place: an interrupted or oversized upload leaves nothing behind, nothing is ever
// buffered whole in memory, and no name from the request touches a path. This is single-node mode's
// store; cluster mode's SharedBlobStore (shared-blob-store.ts) keeps the bytes in PostgreSQL and uses
// the same directory as its cache.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../platform/errors.js';

const SHA256_HEX = /^[0-9a-f]{64}$/;

export interface ReceivedBlob {
  sha256: string;
  size: number;
}

/** Looks at a finished upload (a ZIP's directory, say) before it is kept; throws to refuse it. */
export type UploadCheck = (file: string) => Promise<void>;

/** What the firmware and installer services need of a blob store, on one instance or a cluster. */
export interface BlobStorage {
  /** Stores the bytes of `body`; 413 PAYLOAD_TOO_LARGE past `maxBytes`, 400 when empty or cut short. */
  receive(body: Readable, maxBytes: number, check?: UploadCheck): Promise<ReceivedBlob>;
  /** The stored bytes, or undefined when there is no such blob. */
  open(sha256: string): Promise<{ stream: Readable; size: number } | undefined>;
  /**
   * A file on this machine holding the blob, for readers that need random access (a ZIP's directory);
   * undefined when there is no such blob. The file may still vanish before it is opened, when the
   * blob is removed meanwhile: readers treat ENOENT as "missing".
   */
  localPath(sha256: string): Promise<string | undefined>;
  remove(sha256: string): Promise<void>;
}

/** Where a blob named by `sha256` lives in `dir`; refuses anything but a SHA-256, so no path escapes. */
export function blobPath(dir: string, sha256: string): string {
  if (!SHA256_HEX.test(sha256)) throw new Error(`not a SHA-256: ${sha256}`);
  return path.join(dir, sha256);
}

export function isSha256(name: string): boolean {
  return SHA256_HEX.test(name);
}

/**
 * Streams `body` to a new temporary file in `dir`, hashing and counting, and runs `check` on it. On
 * any failure the file is gone and an AppError says why (the client going away or the disk failing is
 * a 400 "did not complete"); on success the caller owns `temp` and must rename or remove it.
 */
export async function receiveToTempFile(
  dir: string,
  body: Readable,
  maxBytes: number,
  check?: UploadCheck,
): Promise<ReceivedBlob & { temp: string }> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = path.join(dir, `.upload-${randomBytes(8).toString('hex')}`);
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > maxBytes) return done(new AppError('PAYLOAD_TOO_LARGE', `Larger than the limit of ${maxBytes} bytes (FIRMWARE_MAX_BYTES)`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(body, meter, createWriteStream(temp, { mode: 0o600 }));
    if (size === 0) throw new AppError('VALIDATION_ERROR', 'The body is empty');
    await check?.(temp);
    return { temp, sha256: hash.digest('hex'), size };
  } catch (err) {
    await rm(temp, { force: true });
    if (err instanceof AppError) throw err;
    // The client went away or the disk failed: nothing was kept.
    throw new AppError('VALIDATION_ERROR', 'The upload did not complete; nothing was stored', { cause: err });
  }
}

export class BlobStore implements BlobStorage {
  constructor(private readonly dir: string) {}

  async receive(body: Readable, maxBytes: number, check?: UploadCheck): Promise<ReceivedBlob> {
    const { temp, sha256, size } = await receiveToTempFile(this.dir, body, maxBytes, check);
    try {
      await rename(temp, blobPath(this.dir, sha256)); // same bytes already there: replaced by identical ones
    } catch (err) {
      await rm(temp, { force: true });
      throw new AppError('VALIDATION_ERROR', 'The upload did not complete; nothing was stored', { cause: err });
    }
    return { sha256, size };
  }

  async open(sha256: string): Promise<{ stream: Readable; size: number } | undefined> {
    const file = blobPath(this.dir, sha256);
    const info = await stat(file).catch(() => undefined);
    return info ? { stream: createReadStream(file), size: info.size } : undefined;
  }

  async localPath(sha256: string): Promise<string | undefined> {
    const file = blobPath(this.dir, sha256);
    return (await stat(file).catch(() => undefined)) ? file : undefined;
  }

  async remove(sha256: string): Promise<void> {
    await rm(blobPath(this.dir, sha256), { force: true });
  }
}
