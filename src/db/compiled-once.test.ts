import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';
import { compiledOnce } from './compiled-once.js';

interface Db {
  t: { a: number; b: string };
}

/** A Kysely that compiles for PostgreSQL and records what it would send. */
function recordingDb(sent: CompiledQuery[]): Kysely<Db> {
  return new Kysely<Db>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
    log: (event) => void sent.push(event.query),
  });
}

describe('compiledOnce', () => {
  it('sends one text, with each call’s values in their slots', async () => {
    const sent: CompiledQuery[] = [];
    const db = recordingDb(sent);
    const find = compiledOnce<Db, { b: string; a: number }>((db, slot) => db.selectFrom('t').select('a').where('b', '=', slot('b')).where('a', '>', slot('a')));
    await find(db, { a: 1, b: 'one' });
    await find(db, { b: 'two', a: 2 });
    expect(sent.map((q) => q.sql)).toEqual([
      'select "a" from "t" where "b" = $1 and "a" > $2',
      'select "a" from "t" where "b" = $1 and "a" > $2',
    ]);
    expect(sent.map((q) => q.parameters)).toEqual([
      ['one', 1],
      ['two', 2],
    ]);
  });

  it('refuses a statement with a value that is not a slot (it would be frozen into every call)', async () => {
    const find = compiledOnce<Db, { a: number }>((db, slot) => db.selectFrom('t').select('a').where('b', '=', 'fixed').where('a', '=', slot('a')));
    await expect(find(recordingDb([]), { a: 1 })).rejects.toThrow(/parameter 1 .* is not a slot/);
  });
});
