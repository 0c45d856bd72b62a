// DbHandle.run, the heartbeat batch's way to the database (around Kysely on PostgreSQL): rows come back
// as Kysely would give them, a registered text is sent as a named prepared statement, and a failed
// statement is counted for rmm_db_query_errors_total like a failed Kysely query.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbHandle } from '../src/db/create-db.js';
import { preparedText } from '../src/db/prepared-statements.js';
import { createTestDb, testDbKind } from './helpers/db.js';

let handle: DbHandle;
beforeAll(async () => {
  handle = await createTestDb();
});
afterAll(() => handle.close());

describe('DbHandle.run', () => {
  it('returns the rows, int8 as numbers', async () => {
    const rows = await handle.run<{ n: number; s: string }>('select $1::int8 as n, $2::text as s', [41, 'x']);
    expect(rows).toEqual([{ n: 41, s: 'x' }]);
  });

  it('sends a registered text as a named prepared statement on PostgreSQL', async () => {
    const text = preparedText(`select $1::int as n /* ${testDbKind()} runner test */`);
    expect(await handle.run(text, [7])).toEqual([{ n: 7 }]);
    expect(await handle.run(text, [8])).toEqual([{ n: 8 }]);
    if (testDbKind() !== 'postgres') return;
    // pg's pool hands out the connection released last, so this query runs where the statement was prepared.
    const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements where statement like ${'%runner test%'}`.execute(handle.db);
    expect(rows.map((r) => r.name)).toEqual([expect.stringMatching(/^rmm_prepared_\d+$/)]);
  });

  it('counts a failed statement among the failed queries and rejects with its error', async () => {
    const before = handle.stats.queryErrors();
    await expect(handle.run('select * from no_such_table_here', [])).rejects.toThrow(/no_such_table_here/);
    expect(handle.stats.queryErrors()).toBe(before + 1);
  });
});
