// Table types of passkeys (migrations/0023_passkeys.ts): users' WebAuthn credentials and the
// single-use challenges of registration and sign-in ceremonies.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface PasskeysTable {
  id: Generated<number>;
  user_id: number;
  /** base64url, as the browser reports it. */
  credential_id: string;
  /** COSE public key, base64url. */
  public_key: string;
  /** The authenticator's signature counter (0 for authenticators that keep none). */
  counter: Generated<number>;
  /** JSON array of transport hints ("usb", "internal", …) the browser gave at registration. */
  transports: Generated<string>;
  name: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}

export type ChallengePurpose = 'register' | 'second_step' | 'passwordless';

export interface WebauthnChallengesTable {
  challenge: string;
  purpose: ChallengePurpose;
  user_id: number | null;
  pending_id: string | null;
  /** The browser origin the options were asked from; the answer must come from it. */
  origin: string;
  rp_id: string;
  ip: string;
  expires_at: Timestamp;
}
