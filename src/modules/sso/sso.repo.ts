// All SQL of single sign-on: providers, identities (issuer + subject → user) and the one-time logins.
import type { Kysely, Selectable } from 'kysely';
import type { Database, SsoProvidersTable, UserRole } from '../../db/schema.js';
import type { SsoMapping } from '../../db/schema-sso.js';

export type ProviderRow = Selectable<SsoProvidersTable>;

export interface ProviderValues {
  name: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  scopes: string;
  username_claim: string;
  role_claim: string | null;
  mappings: SsoMapping[];
  default_role: UserRole;
  default_customer_ids: number[] | null;
  auto_create: boolean;
  enabled: boolean;
}

const jsonOrNull = (ids: number[] | null) => (ids === null ? null : JSON.stringify(ids));

export function listProviders(db: Kysely<Database>): Promise<ProviderRow[]> {
  return db.selectFrom('sso_providers').selectAll().orderBy('name').execute();
}

export function findProvider(db: Kysely<Database>, id: number): Promise<ProviderRow | undefined> {
  return db.selectFrom('sso_providers').selectAll().where('id', '=', id).executeTakeFirst();
}

export function insertProvider(db: Kysely<Database>, values: ProviderValues, at: Date): Promise<ProviderRow> {
  return db
    .insertInto('sso_providers')
    .values({ ...values, mappings: JSON.stringify(values.mappings), default_customer_ids: jsonOrNull(values.default_customer_ids), created_at: at, updated_at: at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateProvider(db: Kysely<Database>, id: number, values: Partial<ProviderValues>, at: Date): Promise<ProviderRow | undefined> {
  const { mappings, default_customer_ids, ...rest } = values;
  return db
    .updateTable('sso_providers')
    .set({
      ...rest,
      ...(mappings === undefined ? {} : { mappings: JSON.stringify(mappings) }),
      ...(default_customer_ids === undefined ? {} : { default_customer_ids: jsonOrNull(default_customer_ids) }),
      updated_at: at,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteProvider(db: Kysely<Database>, id: number): Promise<boolean> {
  const result = await db.deleteFrom('sso_providers').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function findIdentityUser(db: Kysely<Database>, issuer: string, subject: string): Promise<number | undefined> {
  const row = await db.selectFrom('sso_identities').select('user_id').where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
  return row?.user_id;
}

export async function insertIdentity(db: Kysely<Database>, identity: { issuer: string; subject: string; provider_id: number; user_id: number }, at: Date): Promise<void> {
  await db.insertInto('sso_identities').values({ ...identity, created_at: at, last_login_at: at }).execute();
}

export async function touchIdentity(db: Kysely<Database>, issuer: string, subject: string, at: Date): Promise<void> {
  await db.updateTable('sso_identities').set({ last_login_at: at }).where('issuer', '=', issuer).where('subject', '=', subject).execute();
}

export interface NewLogin {
  state: string;
  provider_id: number;
  browser_hash: string;
  code_verifier: string;
  nonce: string;
  redirect_uri: string;
  expires_at: Date;
}

export async function insertLogin(db: Kysely<Database>, login: NewLogin): Promise<void> {
  await db.insertInto('sso_logins').values(login).execute();
}

/** Logins whose start and ticket have both expired are of no use to anyone. */
/** Sign-ins begun and not yet expired (the bound on what anonymous callers can make us store). */
export async function countOpenLogins(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('sso_logins').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deleteExpiredLogins(db: Kysely<Database>, now: Date): Promise<void> {
  await db
    .deleteFrom('sso_logins')
    .where('expires_at', '<', now)
    .where((eb) => eb.or([eb('ticket_expires_at', 'is', null), eb('ticket_expires_at', '<', now)]))
    .execute();
}

/**
 * Spends a login's state, once: the provider's answer for it is taken at most one time, only from the
 * browser that started it and only before it expires.
 */
export function claimLogin(db: Kysely<Database>, state: string, providerId: number, browserHash: string, now: Date) {
  return db
    .updateTable('sso_logins')
    .set({ returned_at: now })
    .where('state', '=', state)
    .where('provider_id', '=', providerId)
    .where('browser_hash', '=', browserHash)
    .where('returned_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['state', 'code_verifier', 'nonce', 'redirect_uri'])
    .executeTakeFirst();
}

export async function attachTicket(db: Kysely<Database>, state: string, ticket: { ticket_hash: string; user_id: number; mfa: boolean; ticket_expires_at: Date }): Promise<void> {
  await db.updateTable('sso_logins').set(ticket).where('state', '=', state).execute();
}

/** Uses a ticket up, once, from the browser it was issued to; answers whose sign-in it completes. */
export function consumeTicket(db: Kysely<Database>, ticketHash: string, browserHash: string, now: Date) {
  return db
    .updateTable('sso_logins')
    .set({ ticket_used_at: now })
    .where('ticket_hash', '=', ticketHash)
    .where('browser_hash', '=', browserHash)
    .where('ticket_used_at', 'is', null)
    .where('ticket_expires_at', '>', now)
    .returning(['user_id', 'mfa'])
    .executeTakeFirst();
}
