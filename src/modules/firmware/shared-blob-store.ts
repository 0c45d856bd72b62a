// Cluster mode's blob store: PostgreSQL holds every blob (1 MiB chunks and a `blobs` row written last,
// in one transaction), so an upload through one instance downloads through any other with nothing
// shared but the database. Each instance keeps a cache of the files on its own disk (DATA_DIR/blobs,
// the directory single-node mode stores them in), because the installer download needs random access
// to a file and a firmware download should not cost a database round trip per megabyte each time.
// Blobs are named by their SHA-256, so a cached copy is never stale: it can only be there or not. What
// can go is the blob itself (removed through another instance), so every read asks PostgreSQL whether
// the blob still exists and answers "missing" when it does not, dropping the cached file (unless it is
// a single-node file still to import: see localPath). Nothing here ever holds more than one chunk of a
// blob in memory.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Logger } from '../../platform/logger.js';
import { blobPath, receiveToTempFile, type BlobStorage, type ReceivedBlob, type UploadCheck } from './blob-store.js';
import { isBlobReferenced } from './firmware.repo.js';
import * as repo from './shared-blobs.repo.js';

/** Chunk size in the database: big enough to keep a 256 MB blob to 256 rows, small enough to stream. */
export const CHUNK_BYTES = 1024 * 1024;

/** A chunk was not there while fetching: the blob was removed meanwhile (or the database lost it). */
class ChunkMissing extends Error {}

export class SharedBlobStore implements BlobStorage {
  /** Fetches into the cache (or imports) in progress, by hash: concurrent readers of one blob share one. */
  readonly #fetches = new Map<string, Promise<string | undefined>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly cacheDir: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Streams the upload to a temporary file (hashed, limited, checked: see receiveToTempFile), copies it
   * into PostgreSQL, then keeps the file as this instance's cached copy. A failure before the commit
   * leaves neither rows nor files; database errors pass through as they are (503 when it is away).
   */
  async receive(body: Readable, maxBytes: number, check?: UploadCheck): Promise<ReceivedBlob> {
    const { temp, sha256, size } = await receiveToTempFile(this.cacheDir, body, maxBytes, check);
    try {
      await this.#share(temp, sha256, size);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    // The blob is safe in PostgreSQL now; a cache that cannot take it only costs a fetch later.
    await rename(temp, blobPath(this.cacheDir, sha256)).catch(async (err: unknown) => {
      this.logger.warn({ err, sha256 }, 'Could not keep an uploaded blob in the local cache; it is fetched from PostgreSQL when read');
      await rm(temp, { force: true });
    });
    return { sha256, size };
  }

  async open(sha256: string): Promise<{ stream: Readable; size: number } | undefined> {
    const file = await this.localPath(sha256);
    if (!file) return undefined;
    // Opened before returning, so a removal after this point cannot cut the download short.
    const handle = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined; // removed between the check and here
      throw err;
    });
    if (!handle) return undefined;
    try {
      const { size } = await handle.stat();
      return { stream: handle.createReadStream(), size };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** The cached file, fetched from PostgreSQL first when this instance has no copy yet. */
  async localPath(sha256: string): Promise<string | undefined> {
    const file = blobPath(this.cacheDir, sha256);
    const blob = await repo.findBlob(this.db, sha256);
    if (blob) {
      const cached = await stat(file).catch(() => undefined);
      if (cached?.size === blob.size) return file;
      return this.#once(sha256, () => this.#fetch(sha256, blob.size));
    }
    if (!(await stat(file).catch(() => undefined))) return undefined;
    // A file here that PostgreSQL lacks: a single-node file not imported yet (see importLocal), which a
    // firmware or installer row still names, is imported now rather than lost; anything else is the
    // cached copy of a blob removed through another instance, which must not serve and goes.
    if (await isBlobReferenced(this.db, sha256)) return this.#once(sha256, async () => ((await this.#importFile(sha256)) ? file : undefined));
    await rm(file, { force: true });
    return undefined;
  }

  async remove(sha256: string): Promise<void> {
    await this.db.transaction().execute((trx) => repo.deleteBlob(trx, sha256));
    await rm(blobPath(this.cacheDir, sha256), { force: true });
  }

  /**
   * A single-node deployment on PostgreSQL that becomes a cluster has its firmware and installer files
   * in DATA_DIR/blobs, which is this store's cache directory, and not in the database. Run once at
   * start-up: every blob a firmware or installer row names that PostgreSQL lacks is copied in from its
   * file here (after checking the file's hash), so it downloads through every instance from then on.
   * Only named blobs are imported: an unnamed file is either left over or a cached copy of a blob that
   * another instance removed while this one was down, and importing it would bring back bytes that
   * nothing will ever remove. Several instances importing the same blob at once are harmless (the
   * inserts of the second find the rows of the first and do nothing). A read before this has run
   * imports the one blob it asks for (localPath), so no single-node file is ever dropped as stale.
   */
  async importLocal(): Promise<{ imported: number; missing: string[] }> {
    const wanted = await repo.referencedButNotShared(this.db);
    const missing: string[] = [];
    let imported = 0;
    for (const sha256 of wanted) {
      if (await this.#importFile(sha256)) imported++;
      else missing.push(sha256);
    }
    if (imported > 0) this.logger.info({ imported }, 'Copied blobs of this instance (single-node files) into PostgreSQL for the cluster');
    if (missing.length > 0) {
      this.logger.warn({ missing }, 'Firmware or installer rows name blobs that neither PostgreSQL nor this instance has; their downloads answer 404 until uploaded again');
    }
    return { imported, missing };
  }

  /** Copies this instance's file of a blob into PostgreSQL; false when there is none or its bytes are not that blob's. */
  async #importFile(sha256: string): Promise<boolean> {
    const file = blobPath(this.cacheDir, sha256);
    const local = await hashFile(file).catch(() => undefined);
    if (local?.sha256 !== sha256) return false;
    await this.#share(file, sha256, local.size);
    return true;
  }

  /** Copies a complete local file into PostgreSQL: its chunks, then its `blobs` row, in one transaction. */
  async #share(file: string, sha256: string, size: number): Promise<void> {
    if (await repo.findBlob(this.db, sha256)) return; // the same bytes are stored already
    await this.db.transaction().execute(async (trx) => {
      const handle = await open(file, 'r');
      try {
        const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size));
        for (let seq = 0, offset = 0; offset < size; seq++, offset += CHUNK_BYTES) {
          const length = Math.min(CHUNK_BYTES, size - offset);
          await readExactly(handle, buffer, length, offset);
          // Each insert is done before the next read, so one buffer serves every chunk.
          await repo.insertChunk(trx, sha256, seq, buffer.subarray(0, length));
        }
      } finally {
        await handle.close();
      }
      await repo.insertBlob(trx, sha256, size);
    });
  }

  /** Runs `work` for the blob unless it runs already, in which case its result is shared. */
  #once(sha256: string, work: () => Promise<string | undefined>): Promise<string | undefined> {
    let running = this.#fetches.get(sha256);
    if (!running) {
      running = work().finally(() => this.#fetches.delete(sha256));
      this.#fetches.set(sha256, running);
    }
    return running;
  }

  /**
   * Writes the blob from PostgreSQL into a temporary file chunk by chunk, checks its hash and renames it
   * into the cache (readers never see a partial file). Undefined when the blob went meanwhile.
   */
  async #fetch(sha256: string, size: number): Promise<string | undefined> {
    await mkdir(this.cacheDir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.cacheDir, `.fetch-${randomBytes(8).toString('hex')}`);
    const hash = createHash('sha256');
    let written = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        written += chunk.length;
        done(null, chunk);
      },
    });
    try {
      await pipeline(Readable.from(this.#chunks(sha256, size), { objectMode: false }), meter, createWriteStream(temp, { mode: 0o600 }));
      const actual = hash.digest('hex');
      if (written !== size || actual !== sha256) {
        throw new Error(`Blob ${sha256} in PostgreSQL is damaged: ${written} bytes hashing to ${actual}, expected ${size} bytes`);
      }
      const file = blobPath(this.cacheDir, sha256);
      await rename(temp, file);
      return file;
    } catch (err) {
      await rm(temp, { force: true });
      if (err instanceof ChunkMissing && !(await repo.findBlob(this.db, sha256))) return undefined;
      throw err;
    }
  }

  /** The blob's chunks in order, one query each, so only one is in memory at a time. */
  async *#chunks(sha256: string, size: number): AsyncGenerator<Uint8Array> {
    for (let seq = 0; seq * CHUNK_BYTES < size; seq++) {
      const data = await repo.readChunk(this.db, sha256, seq);
      if (!data) throw new ChunkMissing(`Blob ${sha256} has no chunk ${seq}`);
      yield data;
    }
  }
}

async function readExactly(handle: Awaited<ReturnType<typeof open>>, buffer: Buffer, length: number, position: number): Promise<void> {
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(buffer, done, length - done, position + done);
    if (bytesRead === 0) throw new Error(`The file ended ${length - done} bytes early`);
    done += bytesRead;
  }
}

async function hashFile(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.length;
  }
  return { sha256: hash.digest('hex'), size };
}
