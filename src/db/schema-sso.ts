// Row types of single sign-on (migrations/0024_sso.ts).
import type { ColumnType, Generated } from 'kysely';
import type { UserRole } from './schema-enums.js';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
/** jsonb: read as the value, written as its JSON text. */
type Json<T> = ColumnType<T, string, string>;

/** One rule of a provider's mapping: a user whose role claim holds `value` gets this role and customers. */
export interface SsoMapping {
  value: string;
  role: UserRole;
  /** null: every customer. */
  customer_ids: number[] | null;
}

export interface SsoProvidersTable {
  id: Generated<number>;
  name: string;
  issuer: string;
  client_id: string;
  /** Sealed with the server's SecretBox; never answered, only its hint. */
  client_secret: string;
  /** Space-separated, as OAuth sends them. */
  scopes: string;
  username_claim: string;
  role_claim: string | null;
  mappings: Json<SsoMapping[]>;
  default_role: UserRole;
  /** null: every customer. */
  default_customer_ids: ColumnType<number[] | null, string | null, string | null>;
  auto_create: boolean;
  enabled: boolean;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export interface SsoIdentitiesTable {
  issuer: string;
  subject: string;
  provider_id: number | null;
  user_id: number;
  created_at: CreatedAt;
  last_login_at: Timestamp | null;
}

export interface SsoLoginsTable {
  /** The OAuth `state`: the row's key, used once. */
  state: string;
  provider_id: number;
  /** SHA-256 of the random value in the browser's cookie: the callback and the ticket need that browser. */
  browser_hash: string;
  code_verifier: string;
  nonce: string;
  redirect_uri: string;
  expires_at: Timestamp;
  /** When the provider sent the browser back (the state is spent from then on). */
  returned_at: Timestamp | null;
  /** SHA-256 of the one-time ticket the console exchanges for its token. */
  ticket_hash: string | null;
  user_id: number | null;
  /** Whether the provider said the user did a second factor (`amr` holds `mfa`). */
  mfa: boolean | null;
  ticket_expires_at: Timestamp | null;
  ticket_used_at: Timestamp | null;
}
