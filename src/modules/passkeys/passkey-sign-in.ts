// Signing in with a passkey: as the second step of a password sign-in (any of the user's passkeys, user
// verification preferred), or, when the passwordless_login setting is on, alone: the browser offers the
// passkeys it holds for this site (discoverable credentials), and one that verifies the user (PIN,
// biometrics) proves both who they are and a second factor. Every failure is 401 INVALID_CREDENTIALS;
// at the second step it also counts against the pending login's few tries.
import { generateAuthenticationOptions, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { AuthService, ClientInfo, LoginResult } from '../auth/auth.service.js';
import type { SettingsService } from '../settings/settings.service.js';
import { findUser } from '../users/users.repo.js';
import { CEREMONY_TIMEOUT_MS, challengeOf, invalidPasskey, storeChallenge, transportsOf, userHandleOf, verifyAssertion } from './ceremony.js';
import * as repo from './passkeys.repo.js';
import type { RelyingParty } from './relying-party.js';

/**
 * Passwordless options are handed to anyone, so what they store is bounded: open challenges (each lives
 * 5 minutes) per address and in all. A browser needs one per sign-in attempt.
 */
export const OPEN_PASSWORDLESS_PER_IP = 20;
export const OPEN_PASSWORDLESS_TOTAL = 5_000;

const passwordlessOff = () => new AppError('FORBIDDEN', 'Sign-in with a passkey alone is turned off (setting passwordless_login)');

export class PasskeySignIn {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly auth: AuthService,
    private readonly settings: SettingsService,
    private readonly clock: Clock,
  ) {}

  /** The username a pending token was issued to (for the audit log), if the token is genuine. */
  pendingUsername(pendingToken: string): string | undefined {
    return this.auth.pendingUsername(pendingToken);
  }

  /** Options for the second step, limited to the pending user's passkeys. */
  async secondStepOptions(pendingToken: string, rp: RelyingParty, ip: string) {
    const { pendingId, user } = await this.auth.openPending(pendingToken);
    const passkeys = await repo.listPasskeys(this.db, user.id);
    if (passkeys.length === 0) throw new AppError('CONFLICT', 'This user has no passkey; use the authentication code');
    const options = await generateAuthenticationOptions({
      rpID: rp.rpID,
      allowCredentials: passkeys.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
      userVerification: 'preferred',
      timeout: CEREMONY_TIMEOUT_MS,
    });
    await storeChallenge(this.db, { challenge: options.challenge, purpose: 'second_step', user_id: user.id, pending_id: pendingId, rp, ip }, this.clock.now());
    return options;
  }

  /** The second step with a passkey: a verified assertion completes the pending login. */
  async secondStep(pendingToken: string, response: AuthenticationResponseJSON, client: ClientInfo): Promise<LoginResult & { kind: 'token' }> {
    const { pendingId, user } = await this.auth.openPending(pendingToken);
    const now = this.clock.now();
    try {
      const challenge = await repo.takeChallenge(this.db, challengeOf(response.response.clientDataJSON), 'second_step', { pending_id: pendingId }, now);
      if (!challenge) throw invalidPasskey('This passkey request has expired or was already used; try again');
      const passkey = await repo.findByCredentialId(this.db, response.id);
      if (passkey?.user_id !== user.id) throw invalidPasskey('This passkey is not registered for this user');
      await verifyAssertion(this.db, challenge, passkey, response, { requireUserVerification: false, now });
    } catch (err) {
      if (err instanceof AppError && err.code === 'INVALID_CREDENTIALS') await this.auth.countWrongAttempt(pendingId);
      throw err;
    }
    return this.auth.completePending(pendingId, user, 'passkey', client);
  }

  passwordlessEnabled(): Promise<boolean> {
    return this.settings.passwordlessLogin();
  }

  /** Options for a sign-in with a passkey alone: no allow list (the browser offers what it holds). */
  async passwordlessOptions(rp: RelyingParty, ip: string) {
    if (!(await this.passwordlessEnabled())) throw passwordlessOff();
    const now = this.clock.now();
    const open = await repo.countOpenPasswordless(this.db, ip, now);
    if (open.fromIp >= OPEN_PASSWORDLESS_PER_IP || open.all >= OPEN_PASSWORDLESS_TOTAL) {
      throw new AppError('TOO_MANY_ATTEMPTS', 'Too many passkey sign-ins in progress; try again in a few minutes', { headers: { 'retry-after': '60' } });
    }
    const options = await generateAuthenticationOptions({ rpID: rp.rpID, userVerification: 'required', timeout: CEREMONY_TIMEOUT_MS });
    await storeChallenge(this.db, { challenge: options.challenge, purpose: 'passwordless', user_id: null, pending_id: null, rp, ip }, now);
    return options;
  }

  /** A verified assertion with user verification signs its owner in; no second step follows. */
  async passwordless(response: AuthenticationResponseJSON, client: ClientInfo): Promise<LoginResult & { kind: 'token' }> {
    if (!(await this.passwordlessEnabled())) throw passwordlessOff();
    const now = this.clock.now();
    const challenge = await repo.takeChallenge(this.db, challengeOf(response.response.clientDataJSON), 'passwordless', null, now);
    if (!challenge) throw invalidPasskey('This passkey request has expired or was already used; try again');
    const passkey = await repo.findByCredentialId(this.db, response.id);
    if (!passkey) throw invalidPasskey('This passkey is not registered here');
    // A discoverable credential names its user; it must be the passkey's owner.
    const handle = response.response.userHandle;
    if (handle !== undefined && handle !== userHandleOf(passkey.user_id)) throw invalidPasskey('This passkey belongs to another user');
    await verifyAssertion(this.db, challenge, passkey, response, { requireUserVerification: true, now });
    const user = await findUser(this.db, passkey.user_id);
    if (!user) throw invalidPasskey('This passkey is not registered here');
    const result = await this.auth.signIn(user, { method: 'passkey', client, secondFactorDone: true });
    if (result.kind !== 'token') throw new Error('a sign-in with its second factor done must give a token');
    return result;
  }
}
