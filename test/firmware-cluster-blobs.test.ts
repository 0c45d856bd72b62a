// Firmware and installer blobs in cluster mode (issue 32): two instances on one database, each with its
// own cache directory, as two servers on two machines would have. What one receives, the other serves
// byte for byte; what one removes, the other no longer serves; a cache is only a cache (delete it and
// the bytes come back from the database); a single-node deployment's files are imported at start-up.
// Each instance has its own connection pool. PostgreSQL pass only: cluster mode refuses the embedded
// database (it ran here too once, at about a minute per run on PGlite, for a store PGlite never uses).
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { createCoreServices } from '../src/apps/server/services.js';
import { openPostgres, type DbHandle } from '../src/db/create-db.js';
import { BlobStore } from '../src/modules/firmware/blob-store.js';
import { FirmwareService } from '../src/modules/firmware/firmware.service.js';
import { InstallerKeyService } from '../src/modules/installer/installer-keys.service.js';
import { InstallerService } from '../src/modules/installer/installer.service.js';
import { CHUNK_BYTES, SharedBlobStore } from '../src/modules/firmware/shared-blob-store.js';
import { systemClock } from '../src/platform/clock.js';
import { AppError } from '../src/platform/errors.js';
import { createLogger } from '../src/platform/logger.js';
import { testSecrets } from './helpers/app.js';
import { createPostgresUrl, testDbKind } from './helpers/db.js';

const logger = createLogger({ level: 'silent' });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** An upload body arriving in pieces, as a request body does. */
const body = (bytes: Buffer, piece = 64 * 1024) =>
  Readable.from((function* () {
    for (let at = 0; at < bytes.length; at += piece) yield bytes.subarray(at, at + piece);
  })());

interface Instance {
  db: DbHandle;
  dir: string;
  store: SharedBlobStore;
}

let pgDatabase: { url: string; drop(): Promise<void> } | undefined;
const onPostgres = testDbKind() === 'postgres';
const instances: Instance[] = [];
let a: Instance;
let b: Instance;

async function startInstance(dir?: string): Promise<Instance> {
  const db = openPostgres(pgDatabase!.url, logger);
  const cacheDir = dir ?? (await mkdtemp(path.join(os.tmpdir(), 'rmm-blob-cache-')));
  const instance = { db, dir: cacheDir, store: new SharedBlobStore(db.db, cacheDir, logger) };
  instances.push(instance);
  return instance;
}

beforeAll(async () => {
  if (!onPostgres) return;
  pgDatabase = await createPostgresUrl('migrated');
  a = await startInstance();
  b = await startInstance();
});
afterAll(async () => {
  for (const instance of instances.splice(0)) {
    await instance.db.close();
    await rm(instance.dir, { recursive: true, force: true });
  }
  await pgDatabase?.drop();
});

const rowsOf = async (sha256: string) => ({
  blobs: await a.db.db.selectFrom('blobs').selectAll().where('sha256', '=', sha256).execute(),
  chunks: await a.db.db.selectFrom('blob_chunks').select('seq').where('sha256', '=', sha256).orderBy('seq').execute(),
});
const read = async (instance: Instance, sha256: string) => {
  const blob = await instance.store.open(sha256);
  return blob && { size: blob.size, bytes: await buffer(blob.stream) };
};

describe.skipIf(!onPostgres)('two instances sharing blobs through the database', () => {
  it('a blob received by one instance opens on the other, byte for byte', async () => {
    const bytes = randomBytes(3 * CHUNK_BYTES + 12_345); // three whole chunks and a part
    const received = await a.store.receive(body(bytes), 64 * CHUNK_BYTES);
    expect(received).toEqual({ sha256: sha(bytes), size: bytes.length });
    const rows = await rowsOf(received.sha256);
    expect(rows.blobs).toEqual([expect.objectContaining({ size: bytes.length })]);
    expect(rows.chunks.map((c) => c.seq)).toEqual([0, 1, 2, 3]);

    expect(await readdir(b.dir)).toEqual([]); // nothing on the other machine yet
    const opened = await read(b, received.sha256);
    expect(opened?.size).toBe(bytes.length);
    expect(opened!.bytes.equals(bytes)).toBe(true);
    // Now cached there as a file, which is what the installer download reads with random access.
    const file = await b.store.localPath(received.sha256);
    expect(file).toBe(path.join(b.dir, received.sha256));
    expect((await readFile(file!)).equals(bytes)).toBe(true);
    expect(await readdir(b.dir)).toEqual([received.sha256]); // no temporary file left behind
  });

  it('an oversize upload leaves no rows and no files', async () => {
    const bytes = randomBytes(2 * CHUNK_BYTES);
    const err = await a.store.receive(body(bytes), CHUNK_BYTES).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('PAYLOAD_TOO_LARGE');
    expect(await rowsOf(sha(bytes))).toEqual({ blobs: [], chunks: [] });
    expect(await readdir(a.dir)).not.toContain(sha(bytes));
    expect((await readdir(a.dir)).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('an upload its check refuses leaves no rows and no files', async () => {
    const bytes = randomBytes(CHUNK_BYTES + 1);
    const refuse = () => Promise.reject(new AppError('VALIDATION_ERROR', 'not a ZIP'));
    await expect(b.store.receive(body(bytes), 8 * CHUNK_BYTES, refuse)).rejects.toThrow('not a ZIP');
    expect(await rowsOf(sha(bytes))).toEqual({ blobs: [], chunks: [] });
    expect((await readdir(b.dir)).filter((name) => name.startsWith('.') || name === sha(bytes))).toEqual([]);
  });

  it('removed through one instance, the blob is missing on the other, whose cached copy goes too', async () => {
    const bytes = randomBytes(CHUNK_BYTES + 777);
    const { sha256 } = await a.store.receive(body(bytes), 8 * CHUNK_BYTES);
    expect((await read(b, sha256))?.bytes.equals(bytes)).toBe(true); // b has it cached now
    expect(await readdir(b.dir)).toContain(sha256);

    await a.store.remove(sha256);
    expect(await rowsOf(sha256)).toEqual({ blobs: [], chunks: [] });
    expect(await readdir(a.dir)).not.toContain(sha256);
    expect(await b.store.open(sha256)).toBeUndefined();
    expect(await b.store.localPath(sha256)).toBeUndefined();
    expect(await readdir(b.dir)).not.toContain(sha256);
  });

  it('a cached file deleted by hand is fetched again from the database', async () => {
    const bytes = randomBytes(2 * CHUNK_BYTES + 1);
    const { sha256 } = await b.store.receive(body(bytes), 8 * CHUNK_BYTES);
    await rm(path.join(b.dir, sha256));
    expect((await read(b, sha256))?.bytes.equals(bytes)).toBe(true);
    expect(await readdir(b.dir)).toContain(sha256);
    // A damaged (cut short) cached copy is replaced as well.
    await writeFile(path.join(b.dir, sha256), bytes.subarray(0, 100));
    expect((await read(b, sha256))?.bytes.equals(bytes)).toBe(true);
  });

  it('readers of a blob not yet cached all get the whole blob, and one file is left', async () => {
    const bytes = randomBytes(3 * CHUNK_BYTES);
    const { sha256 } = await a.store.receive(body(bytes), 8 * CHUNK_BYTES);
    const reads = await Promise.all([read(b, sha256), read(b, sha256), b.store.localPath(sha256), read(b, sha256)]);
    for (const r of [reads[0], reads[1], reads[3]]) expect(r?.bytes.equals(bytes)).toBe(true);
    expect((await readFile(reads[2] as string)).equals(bytes)).toBe(true);
    expect((await readdir(b.dir)).filter((name) => name === sha256 || name.startsWith('.'))).toEqual([sha256]);
  });

  it('the same bytes uploaded through both instances at once are stored once', async () => {
    const bytes = randomBytes(2 * CHUNK_BYTES + 5);
    const [first, second] = await Promise.all([a.store.receive(body(bytes), 8 * CHUNK_BYTES), b.store.receive(body(bytes), 8 * CHUNK_BYTES)]);
    expect(first).toEqual(second);
    const rows = await rowsOf(first.sha256);
    expect(rows.blobs).toHaveLength(1);
    expect(rows.chunks.map((c) => c.seq)).toEqual([0, 1, 2]);
  });

  it('firmware uploaded through one instance downloads through the other; deleted, it is gone there too', async () => {
    const onA = new FirmwareService(a.db.db, a.store, systemClock, 64 * CHUNK_BYTES);
    const onB = new FirmwareService(b.db.db, b.store, systemClock, 64 * CHUNK_BYTES);
    const bytes = randomBytes(5 * CHUNK_BYTES + 3);
    const stored = await onA.upload({ version: '7.0.1', platform: 'linux', replace: false, body: body(bytes), signature: null });
    const download = await onB.download('linux', '7.0.1');
    expect((await buffer(download.stream)).equals(bytes)).toBe(true);

    await onA.delete(stored.id);
    await expect(onB.download('linux', '7.0.1')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await rowsOf(sha(bytes))).toEqual({ blobs: [], chunks: [] });
  });

  it('an installer package uploaded through one instance downloads through the other, with its entries intact', async () => {
    const secrets = testSecrets(); // one cluster, one set of secrets
    const installersOn = (instance: Instance) => {
      const core = createCoreServices(instance.db, secrets, systemClock);
      return new InstallerService(instance.db.db, instance.store, core.settings, new InstallerKeyService(instance.db.db, core.box, systemClock), systemClock, 64 * CHUNK_BYTES);
    };
    const agentBinary = randomBytes(2 * CHUNK_BYTES + 10); // stored as it is: random bytes do not compress
    const zip = new yazl.ZipFile();
    zip.addBuffer(agentBinary, 'rmm-agent.exe', { compress: false });
    zip.addBuffer(Buffer.from('install me'), 'README.txt');
    zip.end();
    await installersOn(a).upload('windows', zip.outputStream as Readable);

    const admin = { kind: 'user', userId: 1, username: 'admin', role: 'admin', customerIds: null } as const;
    const download = await installersOn(b).download(admin, 'windows');
    const archive = await buffer(download.stream);
    expect(archive.length).toBe(download.size);
    const entries = new Map<string, Buffer>();
    const unzipped = await yauzl.fromBufferPromise(archive, { lazyEntries: true });
    for await (const entry of unzipped.eachEntry()) entries.set(entry.fileName, await buffer(await unzipped.openReadStreamPromise(entry)));
    expect(entries.get('rmm-agent.exe')?.equals(agentBinary)).toBe(true);
    expect(entries.get('README.txt')?.toString()).toBe('install me');
  });
});

describe.skipIf(!onPostgres)('a single-node deployment becoming a cluster', () => {
  it('imports the files its firmware and installer rows name, and nothing else', async () => {
    // The files as single-node mode left them in DATA_DIR/blobs, with the rows that name them.
    const dataBlobs = await mkdtemp(path.join(os.tmpdir(), 'rmm-single-node-blobs-'));
    const singleNode = new BlobStore(dataBlobs);
    const firmwareBytes = randomBytes(2 * CHUNK_BYTES + 99);
    const installerBytes = randomBytes(300_000);
    const unnamedBytes = randomBytes(1000);
    const firmware = await singleNode.receive(body(firmwareBytes), 64 * CHUNK_BYTES);
    const installer = await singleNode.receive(body(installerBytes), 64 * CHUNK_BYTES);
    const unnamed = await singleNode.receive(body(unnamedBytes), 64 * CHUNK_BYTES);
    const damaged = await singleNode.receive(body(randomBytes(2000)), 64 * CHUNK_BYTES);
    await writeFile(path.join(dataBlobs, damaged.sha256), randomBytes(2000)); // no longer the bytes its name says
    const absent = sha(randomBytes(10)); // named by a row, but no file anywhere
    const now = new Date();
    await a.db.db
      .insertInto('firmware')
      .values([
        { version: '1.0.0', platform: 'freebsd', sha256: firmware.sha256, size: firmware.size, created_at: now, signature: null },
        { version: '1.0.1', platform: 'freebsd', sha256: damaged.sha256, size: damaged.size, created_at: now, signature: null },
        { version: '1.0.2', platform: 'freebsd', sha256: absent, size: 10, created_at: now, signature: null },
      ])
      .execute();
    await a.db.db
      .insertInto('installers')
      .values({ platform: 'windows', sha256: installer.sha256, size: installer.size, created_at: now })
      .onConflict((oc) => oc.column('platform').doUpdateSet({ sha256: installer.sha256, size: installer.size })) // the test above stored one
      .execute();

    const upgraded = await startInstance(dataBlobs);
    const result = await upgraded.store.importLocal();
    expect(result.imported).toBe(2);
    expect(result.missing.sort()).toEqual([damaged.sha256, absent].sort());

    // The other instance, which never had these files, now serves them.
    expect((await read(b, firmware.sha256))?.bytes.equals(firmwareBytes)).toBe(true);
    expect((await read(b, installer.sha256))?.bytes.equals(installerBytes)).toBe(true);
    expect(await read(b, unnamed.sha256)).toBeUndefined();
    expect(await read(b, damaged.sha256)).toBeUndefined();
    expect(await rowsOf(unnamed.sha256)).toEqual({ blobs: [], chunks: [] });

    // Run again (every start does): nothing left to import, the single-node files still in place.
    expect(await upgraded.store.importLocal()).toEqual({ imported: 0, missing: expect.arrayContaining([damaged.sha256, absent]) });
    expect((await readFile(path.join(dataBlobs, firmware.sha256))).equals(firmwareBytes)).toBe(true);
  });

  it('a download asked for before the import imports that blob instead of dropping the file', async () => {
    const dataBlobs = await mkdtemp(path.join(os.tmpdir(), 'rmm-single-node-blobs-'));
    const bytes = randomBytes(CHUNK_BYTES + 4321);
    const stored = await new BlobStore(dataBlobs).receive(body(bytes), 64 * CHUNK_BYTES);
    await a.db.db.insertInto('firmware').values({ version: '2.0.0', platform: 'windows', sha256: stored.sha256, size: stored.size, created_at: new Date(), signature: null }).execute();

    const upgraded = await startInstance(dataBlobs);
    const onUpgraded = new FirmwareService(upgraded.db.db, upgraded.store, systemClock, 64 * CHUNK_BYTES);
    expect((await buffer((await onUpgraded.download('windows', '2.0.0')).stream)).equals(bytes)).toBe(true);
    expect((await read(b, stored.sha256))?.bytes.equals(bytes)).toBe(true); // now in the database for all
    expect((await readFile(path.join(dataBlobs, stored.sha256))).equals(bytes)).toBe(true);
  });
});
