// Issue 35, Build 2: single sign-on with OpenID Connect. Providers are configured by an admin (the
// client secret sealed with the server's key); an identity ties a provider's subject to a user; a login
// row carries one sign-in from its start (state, nonce, PKCE verifier) through the callback to the
// console's one-time ticket. Logins live in the database, not in memory, because the provider may send
// the browser back to another instance of a cluster.
import { sql, type Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sso_providers')
      .addColumn('id', 'serial', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('client_secret', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('username_claim', 'text', (c) => c.notNull())
      .addColumn('role_claim', 'text')
      .addColumn('mappings', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
      .addColumn('default_role', 'text', (c) => c.notNull().check(sql`default_role in ('read', 'write', 'admin')`))
      .addColumn('default_customer_ids', 'jsonb')
      .addColumn('auto_create', 'boolean', (c) => c.notNull().defaultTo(false))
      .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createTable('sso_identities')
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      // The provider that first saw it; an identity outlives a provider deleted and added again.
      .addColumn('provider_id', 'integer', (c) => c.references('sso_providers.id').onDelete('set null'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('last_login_at', 'timestamptz')
      .addPrimaryKeyConstraint('sso_identities_pk', ['issuer', 'subject'])
      .execute();
    await db.schema.createIndex('sso_identities_user').on('sso_identities').column('user_id').execute();
    await db.schema
      .createTable('sso_logins')
      .addColumn('state', 'text', (c) => c.primaryKey())
      .addColumn('provider_id', 'integer', (c) => c.notNull().references('sso_providers.id').onDelete('cascade'))
      .addColumn('browser_hash', 'text', (c) => c.notNull())
      .addColumn('code_verifier', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .addColumn('returned_at', 'timestamptz')
      .addColumn('ticket_hash', 'text', (c) => c.unique())
      .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('mfa', 'boolean')
      .addColumn('ticket_expires_at', 'timestamptz')
      .addColumn('ticket_used_at', 'timestamptz')
      .execute();
    await db.schema.createIndex('sso_logins_expiry').on('sso_logins').column('expires_at').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('sso_logins').execute();
    await db.schema.dropTable('sso_identities').execute();
    await db.schema.dropTable('sso_providers').execute();
  },
});

export default migration;
