// Binaries on disk, named by their SHA-256 (firmware and installer packages). An upload streams into a
// temporary file in the same directory while it is hashed and counted, and only a complete one is
// renamed into place: an interrupted or oversized upload leaves nothing behind, nothing is ever
// buffered whole in memory, and no name from the request touches a path.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
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

export class BlobStore {
  constructor(private readonly dir: string) {}

  /**
   * Streams `body` to a temporary file, hashing and counting; 413 PAYLOAD_TOO_LARGE past `maxBytes`.
   * `check` may look at the finished file (a ZIP's directory, say) before it is kept; it throws to refuse.
   */
  async receive(body: Readable, maxBytes: number, check?: (file: string) => Promise<void>): Promise<ReceivedBlob> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.dir, `.upload-${randomBytes(8).toString('hex')}`);
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
      const sha256 = hash.digest('hex');
      await rename(temp, this.pathOf(sha256)); // same bytes already there: replaced by identical ones
      return { sha256, size };
    } catch (err) {
      await rm(temp, { force: true });
      if (err instanceof AppError) throw err;
      // The client went away or the disk failed: nothing was kept.
      throw new AppError('VALIDATION_ERROR', 'The upload did not complete; nothing was stored', { cause: err });
    }
  }

  /** The stored bytes, or undefined when the file is gone. */
  async open(sha256: string): Promise<{ stream: ReadStream; size: number } | undefined> {
    const file = this.pathOf(sha256);
    const info = await stat(file).catch(() => undefined);
    return info ? { stream: createReadStream(file), size: info.size } : undefined;
  }

  /** Path of a stored blob, for readers that need random access (a ZIP's directory). */
  pathOf(sha256: string): string {
    if (!SHA256_HEX.test(sha256)) throw new Error(`not a SHA-256: ${sha256}`);
    return path.join(this.dir, sha256);
  }

  async remove(sha256: string): Promise<void> {
    await rm(this.pathOf(sha256), { force: true });
  }
}
