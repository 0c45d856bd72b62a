// Hot statements built once. Kysely builds, freezes and compiles a new tree for every query, about
// 0.1 ms of CPU per statement on two shared cores: four of them made a quarter of a remote command's
// server CPU (B2). A statement whose text never changes is built here once per database, with a named
// slot for each value; every execution sends that text with the values in the slots' order, and on
// PostgreSQL by name (prepared-statements.ts), so the server plans it once per connection too.
import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import { preparedText } from './prepared-statements.js';

const SLOT = Symbol('slot');

interface Compiled<V> {
  text: string;
  order: Array<keyof V>;
}

/** Puts slot `name` where a value goes: the builder passes it through as a parameter. */
export type SlotOf<V> = <K extends keyof V & string>(name: K) => V[K];

/**
 * A statement built once by `build` (values given as `slot('name')`) and run with `values`. Every
 * parameter of the compiled text must be a slot: a literal value would be frozen into the text.
 */
export function compiledOnce<DB, V extends Record<string, unknown>, R = never>(
  build: (db: Kysely<DB>, slot: SlotOf<V>) => Compilable<R>,
): (db: Kysely<DB>, values: V) => Promise<QueryResult<R>> {
  const perDatabase = new WeakMap<Kysely<DB>, Compiled<V>>();
  const compile = (db: Kysely<DB>): Compiled<V> => {
    const query = build(db, (name) => ({ [SLOT]: name }) as never).compile();
    const order = query.parameters.map((p, i) => {
      const name = (p as { [SLOT]?: keyof V } | null)?.[SLOT];
      if (name === undefined) throw new Error(`compiledOnce: parameter ${i + 1} of "${query.sql}" is not a slot`);
      return name;
    });
    return { text: preparedText(query.sql), order };
  };
  return async (db, values) => {
    let compiled = perDatabase.get(db);
    if (compiled === undefined) perDatabase.set(db, (compiled = compile(db)));
    return db.executeQuery(CompiledQuery.raw(compiled.text, compiled.order.map((name) => values[name])));
  };
}
