// The PostgreSQL backup when pg_dump is not installed (issue 34): the RMM tables' rows through COPY (text
// format, streamed, so the metrics' bulk never sits in memory), with the migrations they were written
// under. A restore brings an empty database to those migrations, copies the rows back in foreign-key
// order and moves the identity sequences past them, all in one transaction; the server migrates forward
// from there.
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { migrateTo } from '../../db/migrator.js';

export interface LogicalManifest {
  /** The last migration the rows were written under. */
  migration: string;
  /** Tables in the order to copy them in (parents before children). */
  tables: string[];
}

/** The call-status service's tables and the migration bookkeeping are not the RMM server's data. */
const SKIPPED = /^(kysely_migration|kysely_migration_lock|callstatus_.*)$/;

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** RMM tables ordered so that every table comes after the tables its foreign keys point to. */
async function tablesInOrder(client: pg.Client): Promise<string[]> {
  const { rows: tables } = await client.query<{ name: string }>("select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name");
  const { rows: links } = await client.query<{ child: string; parent: string }>(
    "select c.conrelid::regclass::text as child, c.confrelid::regclass::text as parent from pg_constraint c join pg_namespace n on n.oid = c.connamespace where c.contype = 'f' and n.nspname = 'public'",
  );
  const names = tables.map((t) => t.name).filter((n) => !SKIPPED.test(n));
  const ordered: string[] = [];
  const placed = new Set<string>();
  const strip = (n: string) => n.replace(/^"|"$/g, '');
  while (ordered.length < names.length) {
    const next = names.find((n) => !placed.has(n) && links.every((l) => strip(l.child) !== n || strip(l.parent) === n || placed.has(strip(l.parent)) || SKIPPED.test(strip(l.parent))));
    if (!next) throw new Error('the tables\' foreign keys form a cycle; use pg_dump');
    ordered.push(next);
    placed.add(next);
  }
  return ordered;
}

/** Streams each table's rows: `add(name, stream)` puts it into the archive. */
export async function dumpLogical(url: string, add: (entry: string, rows: Readable) => Promise<void>): Promise<LogicalManifest> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // One snapshot for every table: rows that reference each other stay consistent.
    await client.query('begin isolation level repeatable read read only');
    const { rows } = await client.query<{ name: string }>('select name from kysely_migration order by name desc limit 1');
    const tables = await tablesInOrder(client);
    for (const table of tables) {
      const out = new PassThrough();
      const copying = pipeline(client.query(copyTo(`copy ${quote(table)} to stdout`)), out);
      await Promise.all([add(`database/tables/${table}.copy`, out), copying]);
    }
    await client.query('commit');
    return { migration: rows[0]?.name ?? '', tables };
  } finally {
    await client.end();
  }
}

/**
 * Loads a logical dump in one transaction (issue 57): with `replace`, dropping what is there, the
 * migrations up to the dump's, the rows and the identity sequences commit together or not at all, so a
 * failure (a COPY that does not fit, a lost connection) leaves the database exactly as it was.
 */
export async function restoreLogical(url: string, manifest: LogicalManifest, rowsOf: (table: string) => Readable | undefined, replace: boolean): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // Kysely (for the migrator) and COPY (pg-copy-streams) on the same connection, so in the same transaction.
  const pool = { connect: async () => Object.assign(client, { release: () => undefined }), end: async () => undefined, options: { connectionString: url } };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the schema is being built
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  try {
    await db.transaction().execute(async (trx) => {
      if (replace) {
        await sql`drop schema public cascade`.execute(trx);
        await sql`create schema public`.execute(trx);
      }
      await migrateTo({ db: trx, dialect: 'postgres' }, manifest.migration);
      // Migrations seed some rows (the default alert rules): the backup's own rows replace them.
      if (manifest.tables.length > 0) await client.query(`truncate table ${manifest.tables.map(quote).join(', ')}`);
      for (const table of manifest.tables) {
        const rows = rowsOf(table);
        if (rows) await pipeline(rows, client.query(copyFrom(`copy ${quote(table)} from stdin`)));
      }
      // Identity columns continue after the restored ids.
      await client.query(`do $$ declare r record; begin
        for r in select c.relname as t, a.attname as col from pg_attribute a join pg_class c on c.oid = a.attrelid
                 join pg_namespace n on n.oid = c.relnamespace
                 where n.nspname = 'public' and c.relkind = 'r' and a.attidentity <> '' and not a.attisdropped loop
          execute format('select setval(pg_get_serial_sequence(%L, %L), coalesce((select max(%I) from %I), 0) + 1, false)', r.t, r.col, r.col, r.t);
        end loop; end $$`);
    });
  } finally {
    await db.destroy();
    await client.end();
  }
}
