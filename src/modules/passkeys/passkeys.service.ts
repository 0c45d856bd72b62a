// Passkeys (issue 35, Build 3): a user registers WebAuthn credentials (several, each named), renames and
// deletes them. A registered passkey is a second factor: from then on a password sign-in asks for it or
// TOTP (passkey-sign-in.ts does the signing in). @simplewebauthn/server does the protocol work.
import { generateRegistrationOptions, verifyRegistrationResponse, type RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { AuthService, SecondFactor } from '../auth/auth.service.js';
import { CEREMONY_TIMEOUT_MS, challengeOf, invalidPasskey, RP_NAME, storeChallenge, transportsOf } from './ceremony.js';
import * as repo from './passkeys.repo.js';
import type { RelyingParty } from './relying-party.js';

/** Enough for every device and key a person owns; bounds what one account can store. */
export const MAX_PASSKEYS_PER_USER = 25;

export class PasskeyService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly auth: AuthService,
    private readonly clock: Clock,
  ) {}

  /** For AuthService.addSecondFactorSource: a user with a passkey may (and must) use it at the second step. */
  async secondFactorsOf(userId: number): Promise<SecondFactor[]> {
    return (await repo.countPasskeys(this.db, userId)) > 0 ? ['passkey'] : [];
  }

  list(userId: number): Promise<repo.PasskeyRow[]> {
    return repo.listPasskeys(this.db, userId);
  }

  /** Options for navigator.credentials.create(); the challenge is kept (single use) for register(). */
  async registrationOptions(userId: number, rp: RelyingParty, ip: string) {
    const user = await this.auth.requireUser(userId);
    const existing = await repo.listPasskeys(this.db, userId);
    if (existing.length >= MAX_PASSKEYS_PER_USER) throw new AppError('CONFLICT', `A user may have at most ${MAX_PASSKEYS_PER_USER} passkeys; delete one first`);
    const options = await generateRegistrationOptions({
      rpName: RP_NAME,
      rpID: rp.rpID,
      userName: user.username,
      userID: isoBase64URL.toBuffer(isoBase64URL.fromUTF8String(String(user.id))),
      timeout: CEREMONY_TIMEOUT_MS,
      attestationType: 'none',
      // The same authenticator twice would only be a second name for one key.
      excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    });
    await storeChallenge(this.db, { challenge: options.challenge, purpose: 'register', user_id: userId, pending_id: null, rp, ip }, this.clock.now());
    return options;
  }

  /** Verifies the browser's answer to registrationOptions() and stores the new passkey. */
  async register(userId: number, name: string, response: RegistrationResponseJSON): Promise<repo.PasskeyRow> {
    const now = this.clock.now();
    const challenge = await repo.takeChallenge(this.db, challengeOf(response.response.clientDataJSON), 'register', { user_id: userId }, now);
    if (!challenge) throw invalidPasskey('The registration has expired or was already used; start again');
    let info;
    try {
      const result = await verifyRegistrationResponse({
        response,
        expectedChallenge: challenge.challenge,
        expectedOrigin: challenge.origin,
        expectedRPID: challenge.rp_id,
        requireUserVerification: false,
      });
      if (!result.verified) throw invalidPasskey();
      info = result.registrationInfo;
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw invalidPasskey(`The new passkey could not be verified: ${(err as Error).message}`);
    }
    if ((await repo.countPasskeys(this.db, userId)) >= MAX_PASSKEYS_PER_USER) {
      throw new AppError('CONFLICT', `A user may have at most ${MAX_PASSKEYS_PER_USER} passkeys; delete one first`);
    }
    const row = await repo.insertPasskey(this.db, {
      user_id: userId,
      credential_id: info.credential.id,
      public_key: isoBase64URL.fromBuffer(info.credential.publicKey),
      counter: info.credential.counter,
      transports: JSON.stringify(response.response.transports ?? []),
      name,
      created_at: now,
    });
    if (!row) throw new AppError('CONFLICT', 'This passkey is already registered');
    return row;
  }

  async rename(userId: number, id: number, name: string): Promise<repo.PasskeyRow> {
    const row = await repo.renamePasskey(this.db, userId, id, name);
    if (!row) throw new AppError('NOT_FOUND', 'Passkey not found');
    return row;
  }

  async remove(userId: number, id: number): Promise<void> {
    if (!(await repo.deletePasskey(this.db, userId, id))) throw new AppError('NOT_FOUND', 'Passkey not found');
  }
}
