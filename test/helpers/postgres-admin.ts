// Creating and dropping the throw-away PostgreSQL databases that tests run on.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type TestDbPlan =
  | { kind: 'pglite'; dumpFile: string }
  | { kind: 'postgres'; adminUrl: string; template: string; prefix: string };

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A new database: a copy of the migrated template, or empty when `template` is undefined. */
export async function createDatabase(plan: { adminUrl: string; prefix: string }, template?: string): Promise<string> {
  const name = `${plan.prefix}_${randomBytes(4).toString('hex')}`;
  await admin(plan.adminUrl, (c) => c.query(`create database "${name}"${template ? ` template "${template}"` : ''}`));
  return name;
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await admin(adminUrl, (c) => c.query(`drop database if exists "${name}" with (force)`));
}

export async function createRawDatabase(adminUrl: string, name: string): Promise<void> {
  await admin(adminUrl, (c) => c.query(`create database "${name}"`));
}
