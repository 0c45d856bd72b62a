// The embedded database's first start (issue 62): an empty data directory is filled from the build's
// seed instead of by initdb inside the server (whose memory the process kept: 815 MiB idle after a first
// start). A directory that holds a database is never touched by the seed, and without a seed (running
// from the sources) PGlite's initdb runs as before.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, openPglite } from '../src/db/create-db.js';
import { createLogger } from '../src/platform/logger.js';
import { fillFromSeed, seedFor } from '../src/db/pglite-seed.js';
import { RMM_MIGRATIONS } from '../src/db/migrator.js';
import { pgliteArtifacts } from '../src/db/pglite-artifacts.js';

let tmp: string;
let seed: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'pglite-seed-'));
  // A seed with a mark in it, so the test can tell a seeded directory from one initdb made.
  const maker = await PGlite.create({ ...(await pgliteArtifacts()) });
  await maker.exec('create table seeded_here (id int)');
  seed = path.join(tmp, 'seed.tar.gz');
  await writeFile(seed, Buffer.from(await (await maker.dumpDataDir('gzip')).arrayBuffer()));
  await maker.close();
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const marked = async (dataDir: string, loadDataDir: Blob | undefined) => {
  const handle = await openPglite({ dataDir, loadDataDir });
  try {
    const rows = await handle.run<{ n: number }>("select count(*)::int as n from pg_tables where tablename = 'seeded_here'", []);
    return rows[0]!.n === 1;
  } finally {
    await handle.close();
  }
};

describe("the embedded database's seed", () => {
  it('fills an empty directory, and leaves one with a database alone', async () => {
    const dir = path.join(tmp, 'fresh');
    const first = await seedFor(dir, seed);
    expect(first).toBeInstanceOf(Blob);
    expect(await marked(dir, first)).toBe(true);
    // Started again: the directory has its database, the seed is not offered (it would overwrite it).
    expect(await seedFor(dir, seed)).toBeUndefined();
    expect(await marked(dir, undefined)).toBe(true);
  });

  it('without a built seed, PGlite makes the database itself', async () => {
    const dir = path.join(tmp, 'from-sources');
    const none = await seedFor(dir, path.join(tmp, 'no-such-seed.tar.gz'));
    expect(none).toBeUndefined();
    expect(await marked(dir, none)).toBe(false);
  });
});

describe('a first start fills the data directory in a child process', () => {
  it('with the seed and the migrations applied, so the server opens a database that is ready', async () => {
    const dir = path.join(tmp, 'first-start');
    await mkdir(dir);
    expect(await fillFromSeed(dir, 'rmm', seed)).toEqual(RMM_MIGRATIONS.list.map(([name]) => name));
    const handle = await openPglite({ dataDir: dir });
    try {
      const [row] = await handle.run<{ n: number; seeded: number }>(
        "select (select count(*)::int from kysely_migration) as n, (select count(*)::int from pg_tables where tablename = 'seeded_here') as seeded",
        [],
      );
      expect(row).toEqual({ n: RMM_MIGRATIONS.list.length, seeded: 1 });
    } finally {
      await handle.close();
    }
    expect(await fillFromSeed(dir, 'rmm', seed)).toBeUndefined();
    expect(existsSync(`${dir}.filling`)).toBe(false);
  });

  it('leaves no half database behind when the child fails', async () => {
    const broken = path.join(tmp, 'broken.tar.gz');
    await writeFile(broken, 'not a gzip file');
    const dir = path.join(tmp, 'failed-start');
    await mkdir(dir);
    await expect(fillFromSeed(dir, 'rmm', broken)).rejects.toThrow(/filling the embedded database from its seed failed/);
    expect(await readdir(dir)).toEqual([]);
    // The next start tries again from the beginning.
    expect(await fillFromSeed(dir, undefined, seed)).toEqual([]);
    expect(existsSync(path.join(dir, 'PG_VERSION'))).toBe(true);
  });
});

describe("the embedded database's buffer pool", () => {
  it('is PGLITE_SHARED_BUFFERS_MB as configured', async () => {
    const handle = await createDb({ databaseUrl: undefined, dataDir: path.join(tmp, 'sized'), pgliteSharedBuffersMb: 24 }, createLogger({ level: 'silent' }));
    try {
      expect(await handle.run<{ shared_buffers: string }>('show shared_buffers', [])).toEqual([{ shared_buffers: '24MB' }]);
    } finally {
      await handle.close();
    }
  });
});
