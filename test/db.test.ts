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
import { createTestDb, testDbKind } from './helpers/db.js';

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
  // A new data directory runs initdb and every migration: CPU-bound work of many seconds that, with test
  // files side by side on two slow cores, took longer than the default 30 s.
  it('keeps its data across a restart and does not migrate again', { timeout: 120_000 }, async () => {
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

describe.skipIf(testDbKind() !== 'postgres')('PostgreSQL connection loss', () => {
  it('survives the server dropping every connection and reconnects on the next query', async () => {
    const { rows: before } = await sql<{ pid: number; db: string }>`select pg_backend_pid() as pid, current_database() as db`.execute(
      handle.db,
    );
    // Terminating our pooled backends is what a PostgreSQL restart looks like to the pool: idle clients
    // get an error event, which must not crash the process.
    const other = await createTestDb();
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${before[0]!.db}`
      .execute(other.db)
      .finally(() => other.close());
    await expect
      .poll(async () => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(handle.db).catch(() => ({ rows: [] }));
        return rows[0]?.pid;
      }, { timeout: 10_000 })
      .not.toBe(before[0]?.pid);
  });

  it('fails a transaction whose connection is cut between statements, not the process', async () => {
    // A client checked out by a transaction has no pool listener; pg emits 'error' on it when its
    // backend goes away, which used to crash the server (issue 29) and here the test run.
    const other = await createTestDb();
    try {
      const transaction = handle.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        const pid = rows[0]!.pid;
        await sql`select pg_terminate_backend(${pid})`.execute(other.db);
        await expect
          .poll(async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where pid = ${pid}`.execute(other.db)).rows[0]?.n)
          .toBe(0);
        await sql`select 1`.execute(trx);
      });
      await expect(transaction).rejects.toThrow();
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(handle.db);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await other.close();
    }
  });
});
