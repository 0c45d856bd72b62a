// Sign-in (contract §1): password login with throttling, the two-step TOTP login, TOTP enrolment and
// removal, logout, and turning a presented access token back into a caller. Token versions end older
// sessions: logout, a password change, disabling 2FA and deleting the user all invalidate them.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { PasswordHasher } from '../users/passwords.js';
import { findUser, findUserByName, touchLastLogin, bumpTokenVersion, type UserRow } from '../users/users.repo.js';
import { LOGIN_THROTTLE, tooManyAttempts } from './attempt-throttle.js';
import * as repo from './auth.repo.js';
import type { Caller } from './caller.js';
import { ACCESS_TOKEN_SECONDS, PENDING_TOKEN_SECONDS, type TokenSigner } from './tokens.js';
import { matchTotp, newTotpSecret, totpUri } from './totp.js';

const MAX_WRONG_CODES = 5;

export type LoginResult =
  | { kind: 'token'; token: string; expiresAt: Date; user: UserRow }
  | { kind: 'pending'; pendingToken: string; expiresAt: Date };

const invalidPending = () => new AppError('INVALID_CREDENTIALS', 'Pending token is invalid, used or expired');

export class AuthService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly passwords: PasswordHasher,
    private readonly tokens: TokenSigner,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  async login(username: string, password: string): Promise<LoginResult> {
    const now = this.clock.now();
    const name = username.toLowerCase();
    const windowStart = new Date(now.getTime() - LOGIN_THROTTLE.windowMs);
    const failures = await repo.countRecentFailures(this.db, name, windowStart);
    const throttled = tooManyAttempts(LOGIN_THROTTLE, failures, now, 'Too many failed logins for this user; try again later');
    if (throttled) throw throttled;
    const user = await findUserByName(this.db, username);
    // Unknown users are compared against a decoy hash: same answer, about the same time.
    if (!(await this.passwords.verify(password, user?.password_hash)) || !user) {
      await repo.recordFailure(this.db, name, now, windowStart);
      throw new AppError('INVALID_CREDENTIALS', 'Invalid username or password');
    }
    await repo.clearFailures(this.db, name);
    if (!user.totp_enabled) return this.issueAccessToken(user);

    await repo.deleteExpiredPendingLogins(this.db, now);
    const id = randomBytes(24).toString('base64url');
    const expiresAt = new Date(now.getTime() + PENDING_TOKEN_SECONDS * 1000);
    await repo.insertPendingLogin(this.db, { id, user_id: user.id, expires_at: expiresAt });
    const pendingToken = this.tokens.sign(
      { sub: String(user.id), username: user.username, typ: '2fa_pending', jti: id },
      PENDING_TOKEN_SECONDS,
    );
    return { kind: 'pending', pendingToken, expiresAt };
  }

  /** The username a pending token was issued to (for the audit log), if the token is genuine. */
  pendingUsername(pendingToken: string): string | undefined {
    const claims = this.tokens.verify(pendingToken);
    return claims?.typ === '2fa_pending' && typeof claims.username === 'string' ? claims.username : undefined;
  }

  /** Second step: a pending token and a TOTP code become an access token. */
  async validateTwoFactor(pendingToken: string, code: string): Promise<LoginResult & { kind: 'token' }> {
    const now = this.clock.now();
    const claims = this.tokens.verify(pendingToken);
    if (claims?.typ !== '2fa_pending' || typeof claims.jti !== 'string') throw invalidPending();
    const pending = await repo.findPendingLogin(this.db, claims.jti);
    if (!pending || pending.used_at || pending.expires_at <= now || pending.failed_attempts >= MAX_WRONG_CODES) {
      throw invalidPending();
    }
    const user = await findUser(this.db, pending.user_id);
    if (!user?.totp_enabled || !user.totp_secret) throw invalidPending();

    const step = await matchTotp(this.box.open(user.totp_secret), code, now);
    if (step === null) {
      await repo.countWrongCode(this.db, pending.id);
      throw new AppError('INVALID_CREDENTIALS', 'Invalid code');
    }
    const outcome = await this.db.transaction().execute(async (trx) => {
      if (!(await repo.consumePendingLogin(trx, pending.id, now, MAX_WRONG_CODES))) return 'gone' as const;
      if (!(await repo.acceptTotpStep(trx, user.id, step))) throw new AppError('INVALID_CREDENTIALS', 'replay');
      return 'ok' as const;
    }).catch(async (err: unknown) => {
      if (!(err instanceof AppError)) throw err;
      await repo.countWrongCode(this.db, pending.id);
      return 'replayed' as const;
    });
    if (outcome === 'gone') throw invalidPending();
    if (outcome === 'replayed') throw new AppError('INVALID_CREDENTIALS', 'This code was already used; wait for the next one');
    return this.issueAccessToken(user);
  }

  async setupTwoFactor(userId: number): Promise<{ secret: string; otpauth_url: string }> {
    const user = await this.requireUser(userId);
    if (user.totp_enabled) throw new AppError('CONFLICT', 'Two-factor authentication is already enabled; disable it first');
    const secret = newTotpSecret();
    await repo.setPendingTotpSecret(this.db, userId, this.box.seal(secret));
    return { secret, otpauth_url: totpUri(user.username, secret) };
  }

  async confirmTwoFactor(userId: number, code: string): Promise<void> {
    const user = await this.requireUser(userId);
    if (user.totp_enabled) throw new AppError('CONFLICT', 'Two-factor authentication is already enabled');
    if (!user.totp_pending_secret) throw new AppError('CONFLICT', 'Start with POST /api/v1/auth/2fa/setup');
    const step = await matchTotp(this.box.open(user.totp_pending_secret), code, this.clock.now());
    if (step === null) throw new AppError('INVALID_CREDENTIALS', 'Invalid code');
    await repo.enableTotp(this.db, userId, user.totp_pending_secret, step);
  }

  async disableTwoFactor(userId: number, password: string, code: string): Promise<void> {
    const user = await this.requireUser(userId);
    if (!user.totp_enabled || !user.totp_secret) throw new AppError('CONFLICT', 'Two-factor authentication is not enabled');
    const passwordOk = await this.passwords.verify(password, user.password_hash);
    const step = await matchTotp(this.box.open(user.totp_secret), code, this.clock.now());
    if (!passwordOk || step === null) throw new AppError('INVALID_CREDENTIALS', 'Invalid password or code');
    if (!(await repo.acceptTotpStep(this.db, userId, step))) {
      throw new AppError('INVALID_CREDENTIALS', 'This code was already used; wait for the next one');
    }
    await repo.disableTotp(this.db, userId);
  }

  async logout(userId: number): Promise<void> {
    await bumpTokenVersion(this.db, userId);
  }

  /** The user an access token stands for, if it is valid and its session has not been ended. */
  async authenticateAccessToken(token: string): Promise<Caller | null> {
    const claims = this.tokens.verify(token);
    if (claims?.typ !== 'access' || typeof claims.sub !== 'string' || !/^\d+$/.test(claims.sub)) return null;
    const user = await findUser(this.db, Number(claims.sub));
    if (!user || user.token_version !== claims.ver) return null;
    return { kind: 'user', userId: user.id, username: user.username };
  }

  async requireUser(userId: number): Promise<UserRow> {
    const user = await findUser(this.db, userId);
    if (!user) throw new AppError('UNAUTHORIZED', 'User no longer exists');
    return user;
  }

  private async issueAccessToken(user: UserRow): Promise<LoginResult & { kind: 'token' }> {
    const now = this.clock.now();
    await touchLastLogin(this.db, user.id, now);
    const token = this.tokens.sign(
      { sub: String(user.id), username: user.username, typ: 'access', ver: user.token_version },
      ACCESS_TOKEN_SECONDS,
    );
    return {
      kind: 'token',
      token,
      expiresAt: new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000),
      user: { ...user, last_login_at: now },
    };
  }
}
