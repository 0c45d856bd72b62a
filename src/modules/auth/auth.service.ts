// Sign-in (contract §1; issue 35): password login with throttling (login-throttle.ts), the two-step login (TOTP, or another
// second factor a feature adds, such as passkeys), TOTP enrolment and removal, sessions, and turning a
// presented access token back into a caller. Every access token names its session (`sid`); a token is
// refused once its session is ended (sign-out, "sign out everywhere", an admin ending it) or the user's
// token version moved on (password change, disabling 2FA, role or scope change, deletion).
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { PasswordHasher } from '../users/passwords.js';
import { findUser, findUserByName, touchLastLogin, type UserRow } from '../users/users.repo.js';
import * as repo from './auth.repo.js';
import { LoginThrottle } from './login-throttle.js';
import * as sessions from './sessions.repo.js';
import type { Caller } from './caller.js';
import { ACCESS_TOKEN_SECONDS, PENDING_TOKEN_SECONDS, type TokenSigner } from './tokens.js';
import { matchTotp, newTotpSecret, totpUri } from './totp.js';

const MAX_WRONG_CODES = 5;

/** Where a sign-in comes from, kept with its session so the user can recognise it. */
export interface ClientInfo {
  ip: string;
  userAgent: string;
}

/** How a session began. */
export type SignInMethod = 'password' | 'totp' | 'passkey' | 'sso';

/** What may complete a pending (two-step) login. */
export type SecondFactor = 'totp' | 'passkey';

export type LoginResult =
  | { kind: 'token'; token: string; expiresAt: Date; user: UserRow }
  | { kind: 'pending'; pendingToken: string; expiresAt: Date; methods: SecondFactor[] };

/** A session's last use is written at most this often (not on every request). */
const TOUCH_INTERVAL_MS = 60_000;

const invalidPending = () => new AppError('INVALID_CREDENTIALS', 'Pending token is invalid, used or expired');

export class AuthService {
  /** Where second factors besides TOTP come from (the passkeys feature adds one). */
  readonly #secondFactorSources: Array<(userId: number) => Promise<SecondFactor[]>> = [];
  /** Who may sign in with a password: every rule must agree (single sign-on may turn it off for non-admins). */
  readonly #passwordSignInRules: Array<(user: UserRow) => Promise<boolean>> = [];
  readonly #throttle: LoginThrottle;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly passwords: PasswordHasher,
    private readonly tokens: TokenSigner,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {
    this.#throttle = new LoginThrottle(db, clock);
  }

  /** Another feature's second factors (passkeys): a user who has one may, and must, use it at the second step. */
  addSecondFactorSource(source: (userId: number) => Promise<SecondFactor[]>): void {
    this.#secondFactorSources.push(source);
  }

  /** A rule that may refuse password sign-in to a user (single sign-on's switch). */
  addPasswordSignInRule(rule: (user: UserRow) => Promise<boolean>): void {
    this.#passwordSignInRules.push(rule);
  }

  async login(username: string, password: string, client: ClientInfo): Promise<LoginResult> {
    // Counted (or refused with 429) before the password is checked; the right one gives it back.
    const attempt = await this.#throttle.begin(username.toLowerCase(), client.ip);
    const user = await findUserByName(this.db, username);
    // Unknown users are compared against a decoy hash: same answer, about the same time.
    if (!(await this.passwords.verify(password, user?.password_hash)) || !user) {
      await attempt.failed();
      throw new AppError('INVALID_CREDENTIALS', 'Invalid username or password');
    }
    await attempt.succeeded();
    const allowed = await Promise.all(this.#passwordSignInRules.map((rule) => rule(user)));
    if (allowed.includes(false)) {
      throw new AppError('FORBIDDEN', 'Sign-in with a password is turned off for this user; use single sign-on');
    }
    return this.signIn(user, { method: 'password', client, secondFactorDone: false });
  }

  /**
   * A user whose identity is proven (password, single sign-on, passkey) gets a token, or, when they have
   * a second factor and the proof did not include one, a pending login for the second step.
   */
  async signIn(user: UserRow, options: { method: SignInMethod; client: ClientInfo; secondFactorDone: boolean }): Promise<LoginResult> {
    const methods = options.secondFactorDone ? [] : await this.secondFactorsOf(user);
    if (methods.length === 0) return this.issueAccessToken(user, options.method, options.client);
    const now = this.clock.now();
    await repo.deleteExpiredPendingLogins(this.db, now);
    const id = randomBytes(24).toString('base64url');
    const expiresAt = new Date(now.getTime() + PENDING_TOKEN_SECONDS * 1000);
    await repo.insertPendingLogin(this.db, { id, user_id: user.id, expires_at: expiresAt });
    const pendingToken = this.tokens.sign(
      { sub: String(user.id), username: user.username, typ: '2fa_pending', jti: id },
      PENDING_TOKEN_SECONDS,
    );
    return { kind: 'pending', pendingToken, expiresAt, methods };
  }

  async secondFactorsOf(user: UserRow): Promise<SecondFactor[]> {
    const others = await Promise.all(this.#secondFactorSources.map((source) => source(user.id)));
    return [...(user.totp_enabled ? (['totp'] as const) : []), ...others.flat()];
  }

  /** The username a pending token was issued to (for the audit log), if the token is genuine. */
  pendingUsername(pendingToken: string): string | undefined {
    const claims = this.tokens.verify(pendingToken);
    return claims?.typ === '2fa_pending' && typeof claims.username === 'string' ? claims.username : undefined;
  }

  /**
   * The live pending login a pending token names, and its user: for a second factor other than TOTP
   * (passkeys), which then calls countWrongAttempt or completePending.
   */
  async openPending(pendingToken: string): Promise<{ pendingId: string; user: UserRow }> {
    const claims = this.tokens.verify(pendingToken);
    if (claims?.typ !== '2fa_pending' || typeof claims.jti !== 'string') throw invalidPending();
    const pending = await repo.findPendingLogin(this.db, claims.jti);
    if (!pending || pending.used_at || pending.expires_at <= this.clock.now() || pending.failed_attempts >= MAX_WRONG_CODES) {
      throw invalidPending();
    }
    const user = await findUser(this.db, pending.user_id);
    if (!user) throw invalidPending();
    return { pendingId: pending.id, user };
  }

  countWrongAttempt(pendingId: string): Promise<void> {
    return repo.countWrongCode(this.db, pendingId);
  }

  /** Uses up the pending login (once) and issues the access token. */
  async completePending(pendingId: string, user: UserRow, method: SignInMethod, client: ClientInfo): Promise<LoginResult & { kind: 'token' }> {
    if (!(await repo.consumePendingLogin(this.db, pendingId, this.clock.now(), MAX_WRONG_CODES))) throw invalidPending();
    return this.issueAccessToken(user, method, client);
  }

  /** Second step: a pending token and a TOTP code become an access token. */
  async validateTwoFactor(pendingToken: string, code: string, client: ClientInfo): Promise<LoginResult & { kind: 'token' }> {
    const now = this.clock.now();
    const { pendingId, user } = await this.openPending(pendingToken);
    if (!user.totp_enabled || !user.totp_secret) throw invalidPending();
    const step = await matchTotp(this.box.open(user.totp_secret), code, now);
    if (step === null) {
      await repo.countWrongCode(this.db, pendingId);
      throw new AppError('INVALID_CREDENTIALS', 'Invalid code');
    }
    const outcome = await this.db.transaction().execute(async (trx) => {
      if (!(await repo.consumePendingLogin(trx, pendingId, now, MAX_WRONG_CODES))) return 'gone' as const;
      if (!(await repo.acceptTotpStep(trx, user.id, step))) throw new AppError('INVALID_CREDENTIALS', 'replay');
      return 'ok' as const;
    }).catch(async (err: unknown) => {
      if (!(err instanceof AppError)) throw err;
      await repo.countWrongCode(this.db, pendingId);
      return 'replayed' as const;
    });
    if (outcome === 'gone') throw invalidPending();
    if (outcome === 'replayed') throw new AppError('INVALID_CREDENTIALS', 'This code was already used; wait for the next one');
    return this.issueAccessToken(user, 'totp', client);
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

  /** Ends every session of the user ("sign out everywhere"). */
  async logout(userId: number): Promise<void> {
    await sessions.endAllSessions(this.db, userId);
  }

  /** The user's live sessions, newest use first. */
  listSessions(userId: number): Promise<sessions.SessionRow[]> {
    return sessions.listSessions(this.db, userId, this.clock.now());
  }

  /** Ends one session of the user (404 when the user has no such session). */
  async endSession(userId: number, sessionId: string): Promise<void> {
    if (!(await sessions.deleteSession(this.db, userId, sessionId))) throw new AppError('NOT_FOUND', 'Session not found');
  }

  /** The user an access token stands for, if it is valid and its session has not been ended. */
  async authenticateAccessToken(token: string): Promise<Caller | null> {
    const claims = this.tokens.verify(token);
    if (claims?.typ !== 'access' || typeof claims.sub !== 'string' || !/^\d+$/.test(claims.sub) || typeof claims.sid !== 'string') return null;
    const now = this.clock.now();
    const user = await sessions.findSessionUser(this.db, claims.sid, Number(claims.sub), now);
    if (!user || user.token_version !== claims.ver) return null;
    if (now.getTime() - user.last_used_at.getTime() >= TOUCH_INTERVAL_MS) await sessions.touchSession(this.db, claims.sid, now);
    return {
      kind: 'user',
      userId: user.id,
      username: user.username,
      role: user.role,
      customerIds: user.all_customers ? null : user.customer_ids,
      sessionId: claims.sid,
    };
  }

  async requireUser(userId: number): Promise<UserRow> {
    const user = await findUser(this.db, userId);
    if (!user) throw new AppError('UNAUTHORIZED', 'User no longer exists');
    return user;
  }

  private async issueAccessToken(user: UserRow, method: SignInMethod, client: ClientInfo): Promise<LoginResult & { kind: 'token' }> {
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000);
    const sid = randomBytes(18).toString('base64url');
    await sessions.deleteExpiredSessions(this.db, user.id, now);
    await sessions.insertSession(this.db, {
      id: sid,
      user_id: user.id,
      method,
      ip: client.ip.slice(0, 64),
      user_agent: client.userAgent.slice(0, 300),
      created_at: now,
      last_used_at: now,
      expires_at: expiresAt,
    });
    await touchLastLogin(this.db, user.id, now);
    const token = this.tokens.sign(
      { sub: String(user.id), username: user.username, typ: 'access', ver: user.token_version, sid },
      ACCESS_TOKEN_SECONDS,
    );
    return { kind: 'token', token, expiresAt, user: { ...user, last_login_at: now } };
  }
}
