// A damaged backup changes nothing (issue 57, item 1), on the embedded database and (in the PostgreSQL
// pass) on PostgreSQL with both dump formats. A server with users, an agent with metrics, a configuration
// backup and a firmware file is backed up, then changes (a user added). Backups with four bytes
// overwritten inside one part (stored uncompressed, so the damage reaches whatever reads the part, as in
// the issue) are restored with --force onto that server's place: each is refused with the damaged part
// named, and every table (row count and md5 of its rows) and every file of DATA_DIR is as before. Backups
// broken where no checksum can see it (the part replaced, its checksum made to fit) get as far as the
// database, whose restore fails and rolls back: the same. Onto an empty place nothing is left behind.
// The users still sign in; an intact backup restored with --force still replaces the data.
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, client, fingerprint, largestParts, overwriteInside, populate, rewrite, stop } from './helpers/backup-archive.js';
import { createProcessDataPlace, PROCESS_TEST_TIMEOUT_MS, spawnServer, type ProcessDataPlace } from './helpers/spawn-server.js';

const PASSWORD = 'admin-password-1';
const PASSPHRASE = 'correct horse battery staple';

describe('a damaged backup changes nothing', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let source: ProcessDataPlace;
  const targets: ProcessDataPlace[] = [];
  let work: string;
  let postgres = false;
  const backupFile = () => path.join(work, 'backup.zip'); // secrets sealed
  const clearFile = () => path.join(work, 'clear.zip'); // secrets in clear
  const logicalFile = () => path.join(work, 'logical.zip'); // PostgreSQL: the CLI's own dump, in clear
  let databaseEntry = '';

  beforeAll(async () => {
    source = await createProcessDataPlace();
    postgres = Boolean(source.env.DATABASE_URL);
    databaseEntry = postgres ? 'database/postgres.dump' : 'database/pglite.tar.gz';
    work = await mkdtemp(path.join(os.tmpdir(), 'rmm-backup-damaged-'));
  });
  afterAll(async () => {
    await source?.cleanup();
    for (const target of targets) await target.cleanup();
    await rm(work, { recursive: true, force: true });
  });

  /** Signs in as each user (with the status expected) on a server started on `place`. */
  async function signIns(place: ProcessDataPlace, expected: Record<string, number>): Promise<void> {
    const server = spawnServer(place.env);
    await server.listening;
    try {
      const api = client(server);
      const got: Record<string, number> = {};
      for (const [username, password] of [['admin', PASSWORD], ['tina', 'tina-password-22'], ['carol', 'carol-password-33']]) {
        got[username!] = (await api('POST', '/auth/login', { username, password })).status;
      }
      expect(got).toEqual(expected);
    } finally {
      await stop(server);
    }
  }

  it('backs up a server with data, which then changes', async () => {
    const server = spawnServer({ ...source.env, ADMIN_PASSWORD: PASSWORD });
    await server.listening;
    const { api, token } = await populate(server, { password: PASSWORD, work, hostname: 'fw-damaged', firmware: randomBytes(64 * 1024) });
    expect((await api('POST', '/users', { username: 'tina', password: 'tina-password-22' }, token)).status).toBe(201);
    await stop(server);

    expect((await cli(['backup', '--out', backupFile(), '--passphrase-stdin'], source.env, `${PASSPHRASE}\n`)).code).toBe(0);
    expect((await cli(['backup', '--out', clearFile()], source.env)).code).toBe(0);
    if (postgres) expect((await cli(['backup', '--out', logicalFile(), '--logical'], source.env)).code).toBe(0);

    // After the backup: a user the backup does not hold.
    const again = spawnServer(source.env);
    await again.listening;
    const api2 = client(again);
    const admin = (await api2('POST', '/auth/login', { username: 'admin', password: PASSWORD })).json() as unknown as { token: string };
    expect((await api2('POST', '/users', { username: 'carol', password: 'carol-password-33' }, admin.token)).status).toBe(201);
    await stop(again);
  });

  // Four bytes overwritten inside one part: each part's checksum (and the ZIP's CRC-32) finds it.
  const damaged: Array<[string, () => Promise<[file: string, entry: string]>]> = [
    ['the database', async () => [backupFile(), databaseEntry]],
    ['a stored file (blob)', async () => [backupFile(), (await largestParts(backupFile(), 'blobs/'))[0]!]],
    ['the manifest', async () => [backupFile(), 'manifest.json']],
    ['the largest table of the logical dump', async () => [logicalFile(), (await largestParts(logicalFile(), 'database/tables/'))[0]!]],
  ];
  it.each(damaged)('%s damaged: refused with --force onto a server\'s place, which stays as it was', async (label, pick) => {
    if (label.includes('logical') && !postgres) return; // the embedded database has one format
    const [original, entry] = await pick();
    const file = path.join(work, `damaged-${label.replaceAll(/\W+/g, '-')}.zip`);
    // The parts stored uncompressed, so that the damage reaches pg_restore, PGlite or the blob file (as
    // in the issue); the manifest as written, deflated.
    if (entry === 'manifest.json') await copyFile(original, file);
    else await rewrite(original, file, { stored: true });
    await overwriteInside(file, entry);
    const before = await fingerprint(source);
    expect(Object.keys(before.tables).length).toBeGreaterThan(30);
    const result = await cli(['restore', file, '--force', '--passphrase-stdin'], source.env, `${PASSPHRASE}\n`);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the backup is damaged: ${entry}${entry === 'manifest.json' ? '' : ' does not match its checksum in the manifest'}`);
    expect(result.stderr).toMatch(/nothing was restored/);
    expect(await fingerprint(source)).toEqual(before);
  });

  // Broken where no checksum can see it (the checksums made to fit): the database's restore fails, and
  // its one transaction (PostgreSQL) or its new directory (PGlite) leaves nothing behind.
  const broken: Array<[string, () => Promise<string>]> = [
    ['the database dump', async () => {
      const file = path.join(work, 'broken-dump.zip');
      // pg_dump's: its last 512 bytes (rows) gone, so pg_restore fails after it made the tables. PGlite's:
      // its tar cut in half inside a sound gzip stream, so that it reaches PGlite.
      await rewrite(clearFile(), file, { entry: databaseEntry, change: (dump) => (postgres ? dump.subarray(0, dump.length - 512) : halfOfTar(dump)) });
      return file;
    }],
    ['a table of the logical dump', async () => {
      const file = path.join(work, 'broken-logical.zip');
      const table = (await largestParts(logicalFile(), 'database/tables/'))[0]!;
      await rewrite(logicalFile(), file, { entry: table, change: (rows) => Buffer.concat([rows.subarray(0, rows.length / 2), Buffer.from('\t\t\t\t'), rows.subarray(rows.length / 2 + 4)]) });
      return file;
    }],
  ];
  it.each(broken)('%s broken behind fitting checksums: the restore fails and rolls back, with --force and onto an empty place', async (label, make) => {
    if (label.includes('logical') && !postgres) return;
    const file = await make();
    const before = await fingerprint(source);
    const forced = await cli(['restore', file, '--force'], source.env);
    expect(forced.code, forced.stdout).toBe(1);
    expect(forced.stderr).not.toMatch(/^restored/m);
    expect(await fingerprint(source)).toEqual(before);

    const empty = await createProcessDataPlace({ database: 'new' });
    targets.push(empty);
    const onto = await cli(['restore', file], empty.env);
    expect(onto.code, onto.stdout).toBe(1);
    expect(await fingerprint(empty)).toEqual({ tables: {}, files: {} });
  });

  it('a damaged backup onto an empty place leaves it empty', async () => {
    const file = path.join(work, 'damaged-for-empty.zip');
    await rewrite(backupFile(), file, { stored: true });
    await overwriteInside(file, databaseEntry);
    const empty = await createProcessDataPlace({ database: 'new' });
    targets.push(empty);
    const result = await cli(['restore', file, '--passphrase-stdin'], empty.env, `${PASSPHRASE}\n`);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`the backup is damaged: ${databaseEntry}`);
    expect(await fingerprint(empty)).toEqual({ tables: {}, files: {} });
  });

  it('a backup made before checksums: damage is found by the ZIP\'s CRC-32; intact, it restores with a warning', async () => {
    const old = path.join(work, 'version1.zip');
    await rewrite(clearFile(), old, { version1: true });
    const damagedOld = path.join(work, 'version1-damaged.zip');
    await rewrite(old, damagedOld, { stored: true });
    await overwriteInside(damagedOld, databaseEntry);
    const target = await createProcessDataPlace({ database: 'new' });
    targets.push(target);
    const refused = await cli(['restore', damagedOld], target.env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the backup is damaged: ${databaseEntry} does not match the ZIP's CRC-32`);
    expect(await fingerprint(target)).toEqual({ tables: {}, files: {} });

    const restored = await cli(['restore', old], target.env);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stderr).toMatch(/predates per-part checksums/);
  });

  it('a restore killed between its two renames of the embedded database: the next one puts the old database back', async () => {
    if (postgres) return; // PostgreSQL restores in one transaction, no directories are swapped
    const before = await fingerprint(source);
    const dataDir = source.env.DATA_DIR!;
    // What the killed restore left: its staging directory holding the database it had moved aside.
    await mkdir(path.join(dataDir, '.restore-killed'));
    await rename(path.join(dataDir, 'pglite'), path.join(dataDir, '.restore-killed', 'pglite.replaced'));
    const file = path.join(work, 'damaged-after-kill.zip');
    await rewrite(backupFile(), file, { stored: true });
    await overwriteInside(file, databaseEntry);
    const result = await cli(['restore', file, '--force', '--passphrase-stdin'], source.env, `${PASSPHRASE}\n`);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('the previous database is back in');
    expect(await fingerprint(source)).toEqual(before);
  });

  it('after all that, everyone still signs in on the server whose place was the target', async () => {
    await signIns(source, { admin: 200, tina: 200, carol: 200 });
  });

  it('an intact backup restored with --force replaces the server\'s data', async () => {
    if (postgres) {
      const logical = await cli(['restore', logicalFile(), '--force'], source.env);
      expect(logical.code, logical.stderr).toBe(0);
      await signIns(source, { admin: 200, tina: 200, carol: 401 });
    }
    const restored = await cli(['restore', backupFile(), '--force', '--passphrase-stdin'], source.env, `${PASSPHRASE}\n`);
    expect(restored.code, restored.stderr).toBe(0);
    await signIns(source, { admin: 200, tina: 200, carol: 401 });
  });
});

/** A gzipped tar cut in half, gzipped again. */
function halfOfTar(gzipped: Buffer): Buffer {
  const tar = gunzipSync(gzipped);
  return gzipSync(tar.subarray(0, Math.floor(tar.length / 2)));
}
