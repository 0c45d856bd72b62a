// What every migration is told about the database it runs on. Migrations import only Kysely and this
// file, never application code, so they stay frozen as the application changes.
import type { Migration } from 'kysely/migration';

export interface MigrationContext {
  /** `pglite` is the embedded database; `postgres` is a real server (plain or with TimescaleDB). */
  readonly dialect: 'postgres' | 'pglite';
  /** True when the TimescaleDB extension can be used; its DDL runs only then. */
  readonly timescale: boolean;
}

export type MigrationFactory = (ctx: MigrationContext) => Migration;
