// Issue 35, Build 3: passkeys (WebAuthn credentials) a user registers, and the challenges the server
// hands out for a ceremony. Challenges live in the database, not in memory, because in a cluster the
// options and the answer may reach different instances; each is deleted when used (single use) and
// refused after `expires_at`.
import type { Kysely } from 'kysely';
import type { MigrationFactory } from './context.js';

const migration: MigrationFactory = () => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('passkeys')
      .addColumn('id', 'serial', (c) => c.primaryKey())
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      // base64url, as the browser reports it; unique across users (an authenticator makes it at random).
      .addColumn('credential_id', 'text', (c) => c.notNull().unique())
      // The COSE public key, base64url (text rather than bytea: pg and PGlite read bytea differently).
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('counter', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('transports', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('last_used_at', 'timestamptz')
      .execute();
    await db.schema.createIndex('passkeys_user').on('passkeys').column('user_id').execute();
    await db.schema
      .createTable('webauthn_challenges')
      .addColumn('challenge', 'text', (c) => c.primaryKey())
      .addColumn('purpose', 'text', (c) => c.notNull())
      // The user registering, or the user of the pending login; null for a passwordless sign-in.
      .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
      .addColumn('pending_id', 'text')
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('rp_id', 'text', (c) => c.notNull())
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webauthn_challenges_expiry').on('webauthn_challenges').column('expires_at').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('webauthn_challenges').execute();
    await db.schema.dropTable('passkeys').execute();
  },
});

export default migration;
