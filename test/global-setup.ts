// Once per test run: build a migrated database that every test file copies. PGlite: initdb + migrate
// in memory and dump the data directory (loading a dump is ~3x faster than a fresh initdb). PostgreSQL
// (TEST_DATABASE_URL set): migrate a template database that each file clones with CREATE DATABASE.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { openPostgres, wrapPglite } from '../src/db/create-db.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { pgliteArtifacts } from '../src/db/pglite-artifacts.js';
import { createLogger } from '../src/platform/logger.js';
import { compiledTree } from './helpers/compiled-tree.js';
import { createRawDatabase, dropDatabase, withDatabase, type TestDbPlan } from './helpers/postgres-admin.js';

const ROOT = path.resolve(import.meta.dirname, '..');

declare module 'vitest' {
  export interface ProvidedContext {
    testDb: TestDbPlan;
    /** Where src/ and migrations/ are compiled to JavaScript for the processes tests start. */
    compiledRoot: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('compiledRoot', await compiledTree(ROOT));
  return setupDatabase(project);
}

async function setupDatabase(project: TestProject): Promise<() => Promise<void>> {
  const adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-test-'));
    const dumpFile = path.join(dir, 'migrated.tar');
    const pglite = await PGlite.create(await pgliteArtifacts());
    const handle = wrapPglite(pglite, 'test template');
    await migrateToLatest(handle);
    // A checkpoint first, so each file's load starts without WAL to replay (about 15 % off each load).
    await pglite.exec('checkpoint');
    const dump = await pglite.dumpDataDir('none');
    await writeFile(dumpFile, Buffer.from(await dump.arrayBuffer()));
    await handle.close();
    project.provide('testDb', { kind: 'pglite', dumpFile });
    return () => rm(dir, { recursive: true, force: true });
  }

  // Names unique to this run, so parallel runs on one server never meet.
  const prefix = `rmm_t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const template = `${prefix}_tpl`;
  await createRawDatabase(adminUrl, template);
  const handle = openPostgres(withDatabase(adminUrl, template), createLogger({ level: 'silent' }), { max: 1 });
  await migrateToLatest(handle);
  await handle.close();
  project.provide('testDb', { kind: 'postgres', adminUrl, template, prefix });
  return () => dropDatabase(adminUrl, template);
}
