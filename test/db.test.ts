// The database layer as features rely on it: migrations applied once, the same JavaScript types on
// PGlite and PostgreSQL, and embedded data that survives a restart.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../migrations/index.js';
import { createDb, type DbHandle } from '../src/db/create-db.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createLogger } from '../src/platform/logger.js';
import { createTestDb } from './helpers/db.js';

const logger = createLogger({ level: 'silent' });

let handle: DbHandle;
beforeAll(async () => {
  handle = await createTestDb();
});
afterAll(() => handle.close());

describe('migrations', () => {
  it('has applied every listed migration, in order, and applies nothing twice', async () => {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(handle.db);
    expect(rows.map((r) => r.name)).toEqual(migrations.map(([name]) => name));
    const again = await migrateToLatest(handle);
    expect(again.applied).toEqual([]);
  });
});

describe('types returned by the database', () => {
  it('gives int8 as number, timestamptz as Date and json as parsed values on both backends', async () => {
    const { rows } = await sql<{ big: unknown; ts: unknown; arr: unknown; doc: unknown; n: unknown }>`
      select 9007199254740991::int8 as big, now() as ts, array[1, 2]::int8[] as arr,
             '{"b":1,"a":[2]}'::json as doc, count(*) as n from (values (1), (2)) v(x)`.execute(handle.db);
    expect(rows[0]).toEqual({ big: 9007199254740991, ts: expect.any(Date), arr: [1, 2], doc: { b: 1, a: [2] }, n: 2 });
  });

  it('stores and reads settings', async () => {
    await handle.db.insertInto('settings').values({ key: 'backend_url', value: 'https://rmm.example.net' }).execute();
    const row = await handle.db.selectFrom('settings').selectAll().where('key', '=', 'backend_url').executeTakeFirstOrThrow();
    expect(row).toEqual({ key: 'backend_url', value: 'https://rmm.example.net', updated_at: expect.any(Date) });
  });
});

describe('embedded database in DATA_DIR', () => {
  it('keeps its data across a restart and does not migrate again', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-persist-'));
    try {
      const first = await createDb({ databaseUrl: undefined, dataDir }, logger);
      expect((await migrateToLatest(first)).applied).toEqual(migrations.map(([name]) => name));
      await first.db.insertInto('settings').values({ key: 'ws_url', value: 'wss://rmm.example.net/ws' }).execute();
      await first.close();

      const second = await createDb({ databaseUrl: undefined, dataDir }, logger);
      expect((await migrateToLatest(second)).applied).toEqual([]);
      const row = await second.db.selectFrom('settings').select('value').where('key', '=', 'ws_url').executeTakeFirst();
      expect(row?.value).toBe('wss://rmm.example.net/ws');
      await second.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
