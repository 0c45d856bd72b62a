// PGlite has one connection, and the server queues every statement and transaction on it
// (src/db/pglite-fair-dialect.ts): first come, first served, and a statement that arrives while a
// transaction holds the connection runs after it, outside it. PGlite only.
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wrapPglite, type DbHandle } from '../src/db/create-db.js';
import { pgliteArtifacts } from '../src/db/pglite-artifacts.js';
import { testDbKind } from './helpers/db.js';

describe.skipIf(testDbKind() !== 'pglite')('the queue on PGlite’s one connection', () => {
  let handle: DbHandle;

  beforeAll(async () => {
    handle = wrapPglite(await PGlite.create(await pgliteArtifacts()), 'fair queue test');
    await sql`create table t (n int)`.execute(handle.db);
  }, 60_000);

  afterAll(() => handle?.close());

  it('answers a burst of statements each with its own result, in the order they came', async () => {
    const finished: number[] = [];
    const results = await Promise.all(
      Array.from({ length: 2000 }, (_, i) =>
        sql<{ n: number }>`select ${i}::int as n`.execute(handle.db).then((r) => {
          finished.push(i);
          return r.rows[0]!.n;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    expect(finished).toEqual(results);
  });

  it('runs a statement that arrives during a transaction after it, not inside it', async () => {
    let outside: Promise<unknown> | undefined;
    await handle.db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into t values (1)`.execute(trx);
        outside = sql`insert into t values (2)`.execute(handle.db);
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await outside;
    const { rows } = await sql<{ n: number }>`select n from t order by n`.execute(handle.db);
    expect(rows.map((r) => r.n)).toEqual([2]);
  });
});
