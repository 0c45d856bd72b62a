// PGlite has one connection, and the server queues every statement and transaction on it
// (src/db/pglite-fair-dialect.ts): first come, first served, and a statement that arrives while a
// transaction holds the connection runs after it, outside it. An urgent statement (an agent socket's
// upgrade check) goes ahead of the waiting ones, but not into a transaction. PGlite only.
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

  it('runs an urgent statement ahead of the ones already waiting', async () => {
    const order: string[] = [];
    const backlog = Array.from({ length: 200 }, (_, i) => sql`select ${i}::int`.execute(handle.db).then(() => order.push(`queued-${i}`)));
    const urgent = sql`select 'urgent'`.execute(handle.urgent).then(() => order.push('urgent'));
    await Promise.all([...backlog, urgent]);
    // The statement running when it arrived (and at most the one handed the connection then) go first.
    expect(order.indexOf('urgent')).toBeLessThanOrEqual(2);
    expect(order.filter((o) => o !== 'urgent')).toEqual(Array.from({ length: 200 }, (_, i) => `queued-${i}`));
  });

  it('runs an urgent statement that arrives during a transaction after it, not inside it', async () => {
    let outside: Promise<unknown> | undefined;
    await handle.db
      .transaction()
      .execute(async (trx) => {
        await sql`insert into t values (3)`.execute(trx);
        outside = sql`insert into t values (4)`.execute(handle.urgent);
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await outside;
    const { rows } = await sql<{ n: number }>`select n from t where n > 2 order by n`.execute(handle.db);
    expect(rows.map((r) => r.n)).toEqual([4]);
  });
});
