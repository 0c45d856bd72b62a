// The parts every WebAuthn ceremony shares: issuing a single-use challenge for a vetted origin, finding
// the challenge a browser answer claims, and checking an assertion against a stored passkey (signature,
// origin, RP ID, counter). Whatever the library throws about an answer becomes 401 INVALID_CREDENTIALS:
// a malformed or forged answer is a failed sign-in, never a 5xx.
import { verifyAuthenticationResponse, type AuthenticationResponseJSON } from '@simplewebauthn/server';
import { decodeClientDataJSON, isoBase64URL } from '@simplewebauthn/server/helpers';
import type { Kysely } from 'kysely';
import type { ChallengePurpose, Database } from '../../db/schema.js';
import { AppError } from '../../platform/errors.js';
import * as repo from './passkeys.repo.js';
import type { RelyingParty } from './relying-party.js';

/** How long a browser has to answer; the options' timeout says the same to the browser. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
export const CEREMONY_TIMEOUT_MS = 2 * 60_000;
export const RP_NAME = 'RMM';

export const invalidPasskey = (message = 'The passkey could not be verified') => new AppError('INVALID_CREDENTIALS', message);

export async function storeChallenge(
  db: Kysely<Database>,
  values: { challenge: string; purpose: ChallengePurpose; user_id: number | null; pending_id: string | null; rp: RelyingParty; ip: string },
  now: Date,
): Promise<void> {
  await repo.insertChallenge(
    db,
    {
      challenge: values.challenge,
      purpose: values.purpose,
      user_id: values.user_id,
      pending_id: values.pending_id,
      origin: values.rp.origin,
      rp_id: values.rp.rpID,
      ip: values.ip.slice(0, 64),
      expires_at: new Date(now.getTime() + CHALLENGE_TTL_MS),
    },
    now,
  );
}

/** The challenge the browser signed, read from its client data (the answer names no challenge otherwise). */
export function challengeOf(clientDataJSON: string): string {
  try {
    const challenge = decodeClientDataJSON(clientDataJSON).challenge;
    if (typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 256) return challenge;
  } catch {
    // Not base64url JSON: below.
  }
  throw invalidPasskey('The answer carries no readable client data');
}

/** The WebAuthn user handle of a user: their id, so a discoverable credential names its owner. */
export function userHandleOf(userId: number): string {
  return isoBase64URL.fromUTF8String(String(userId));
}

export function transportsOf(row: repo.PasskeyRow): string[] {
  try {
    const parsed: unknown = JSON.parse(row.transports);
    return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Checks an assertion against the passkey and the challenge it answers, then records the use. A counter
 * that did not move forward (both non-zero) means a cloned authenticator: refused. The record is a
 * compare-and-set on the counter, so two uses racing with one answer cannot both pass.
 */
export async function verifyAssertion(
  db: Kysely<Database>,
  challenge: repo.ChallengeRow,
  passkey: repo.PasskeyRow,
  response: AuthenticationResponseJSON,
  options: { requireUserVerification: boolean; now: Date },
): Promise<void> {
  let newCounter: number;
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge.challenge,
      expectedOrigin: challenge.origin,
      expectedRPID: challenge.rp_id,
      credential: { id: passkey.credential_id, publicKey: isoBase64URL.toBuffer(passkey.public_key), counter: passkey.counter, transports: transportsOf(passkey) },
      requireUserVerification: options.requireUserVerification,
    });
    if (!result.verified) throw invalidPasskey();
    newCounter = result.authenticationInfo.newCounter;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw invalidPasskey(`The passkey could not be verified: ${(err as Error).message}`);
  }
  if (!(await repo.recordUse(db, passkey.id, passkey.counter, newCounter, options.now))) throw invalidPasskey('The passkey was used at the same time elsewhere');
}
