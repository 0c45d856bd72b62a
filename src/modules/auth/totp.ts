// TOTP per RFC 6238 as the contract fixes it: SHA-1, 6 digits, 30-second steps, one step of tolerance
// either way. Verification reports the matched time step so each step is accepted only once per user.
import { generateSecret, generateURI, verify } from 'otplib';

const PERIOD_SECONDS = 30;
const ISSUER = 'RMM';

export function newTotpSecret(): string {
  return generateSecret();
}

export function totpUri(username: string, secret: string): string {
  return generateURI({ issuer: ISSUER, label: username, secret, period: PERIOD_SECONDS, digits: 6, algorithm: 'sha1' });
}

/** The time step the code belongs to, or null when it is not valid now (±1 step). */
export async function matchTotp(secret: string, code: string, now: Date): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await verify({
    secret,
    token: code,
    epoch: Math.floor(now.getTime() / 1000),
    epochTolerance: PERIOD_SECONDS,
    period: PERIOD_SECONDS,
    digits: 6,
    algorithm: 'sha1',
  });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}
