// One single sign-on, from the button to the console's token (authorization code flow with PKCE):
//   start    → a login row (state, nonce, PKCE verifier, the browser's cookie hash) and the provider's URL;
//   callback → the state spent once, the code exchanged and the ID token checked (openid-client), the
//              user found by issuer + subject, or created when the provider allows it; a ticket issued;
//   exchange → the ticket (once, from the same browser) becomes a token, or the pending TOTP step when
//              the provider did not vouch for a second factor (`amr` without `mfa`).
// The access token never travels in a URL: the callback hands the browser only the short-lived ticket.
// A user whose name is already taken by a local user is refused, never linked: a provider whose users
// may pick their own name (or email) would otherwise let anyone take over that account.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import * as oidc from 'openid-client';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import type { AuthService, ClientInfo, LoginResult } from '../auth/auth.service.js';
import { findUser, findUserByName, type UserRow } from '../users/users.repo.js';
import type { UserService } from '../users/users.service.js';
import { accessFrom, claimAt, providerDidMfa, usernameFrom, type Claims } from './claim-mapping.js';
import type { OidcClients } from './oidc-clients.js';
import { redirectUriOf, type SsoProviderService } from './sso-providers.service.js';
import * as repo from './sso.repo.js';

/** From the button to the provider's answer: time to type a password and a second factor. */
const LOGIN_TTL_MS = 10 * 60_000;
/** From the provider's answer to the console's exchange: one page load. */
const TICKET_TTL_MS = 2 * 60_000;
/** Start is public and stores a row: at most this many sign-ins in progress (each expires in 10 minutes). */
export const MAX_OPEN_LOGINS = 5000;

/** A sign-in that ends on the sign-in page with this message (it is shown as text). */
export class SsoRefusal extends Error {
  constructor(
    message: string,
    /** Who tried, for the audit log, when known. */
    readonly actor?: string,
  ) {
    super(message);
    this.name = 'SsoRefusal';
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');
const bounded = (text: string, max = 300) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export interface CallbackOutcome {
  ticket: string;
  username: string;
  created: boolean;
}

export class SsoLoginService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly providers: SsoProviderService,
    private readonly clients: OidcClients,
    private readonly users: UserService,
    private readonly auth: AuthService,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** The enabled providers, for the sign-in page's buttons. */
  async buttons(): Promise<Array<{ id: number; name: string }>> {
    return (await this.providers.list()).filter((p) => p.enabled).map((p) => ({ id: p.id, name: p.name }));
  }

  /** Begins a sign-in: where to send the browser, and the secret its cookie must carry back. */
  async start(providerId: number, origin: string): Promise<{ location: string; browserSecret: string }> {
    const provider = await this.enabledProvider(providerId);
    const config = await this.configuration(provider);
    const now = this.clock.now();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const browserSecret = randomBytes(24).toString('base64url');
    const redirectUri = redirectUriOf(origin, provider.id);
    await repo.deleteExpiredLogins(this.db, now);
    if ((await repo.countOpenLogins(this.db)) >= MAX_OPEN_LOGINS) {
      throw new SsoRefusal('Too many single sign-ons are in progress; try again in a few minutes.');
    }
    await repo.insertLogin(this.db, {
      state,
      provider_id: provider.id,
      browser_hash: sha256(browserSecret),
      code_verifier: codeVerifier,
      nonce,
      redirect_uri: redirectUri,
      expires_at: new Date(now.getTime() + LOGIN_TTL_MS),
    });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: provider.scopes,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { location: url.href, browserSecret };
  }

  /** The provider sent the browser back: check everything, find or create the user, issue a ticket. */
  async callback(providerId: number, query: Record<string, string | undefined>, browserSecret: string | undefined): Promise<CallbackOutcome> {
    const expired = new SsoRefusal('This sign-in has expired or was started in another browser. Please start again.');
    if (!browserSecret || !query.state) throw expired;
    const login = await repo.claimLogin(this.db, query.state, providerId, sha256(browserSecret), this.clock.now());
    if (!login) throw expired;
    const provider = await this.enabledProvider(providerId);
    if (query.error) throw new SsoRefusal(bounded(`${provider.name} did not sign you in: ${query.error_description || query.error}`));
    const config = await this.configuration(provider);
    const currentUrl = new URL(login.redirect_uri);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) currentUrl.searchParams.set(key, value);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, currentUrl, {
        pkceCodeVerifier: login.code_verifier,
        expectedState: login.state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      this.logger.warn({ err, provider: provider.name }, 'single sign-on: the provider\'s answer was refused');
      throw new SsoRefusal(`The answer from ${provider.name} could not be verified. Please start again.`);
    }
    const idClaims = tokens.claims();
    if (!idClaims) throw new SsoRefusal(`${provider.name} sent no ID token.`);
    const claims = await this.withUserInfo(provider, config, tokens.access_token, idClaims);
    const issuer = config.serverMetadata().issuer;
    const found = await this.findOrCreateUser(provider, issuer, idClaims.sub, claims);
    const ticket = randomBytes(32).toString('base64url');
    await repo.attachTicket(this.db, login.state, {
      ticket_hash: sha256(ticket),
      user_id: found.user.id,
      // Only the signed ID token speaks for how the user authenticated, never the userinfo answer.
      mfa: providerDidMfa(idClaims),
      ticket_expires_at: new Date(this.clock.now().getTime() + TICKET_TTL_MS),
    });
    return { ticket, username: found.user.username, created: found.created };
  }

  /** The console trades the ticket for a token, or for the TOTP step. */
  async exchange(ticket: string, browserSecret: string | undefined, client: ClientInfo): Promise<{ result: LoginResult; username: string }> {
    const refused = new AppError('INVALID_CREDENTIALS', 'This sign-in ticket is invalid, used or expired; please sign in again');
    if (!browserSecret) throw refused;
    const used = await repo.consumeTicket(this.db, sha256(ticket), sha256(browserSecret), this.clock.now());
    const user = used?.user_id ? await findUser(this.db, used.user_id) : undefined;
    if (!used || !user) throw refused;
    return { result: await this.auth.signIn(user, { method: 'sso', client, secondFactorDone: used.mfa === true }), username: user.username };
  }

  private async enabledProvider(id: number): Promise<repo.ProviderRow> {
    const provider = await repo.findProvider(this.db, id);
    if (!provider?.enabled) throw new SsoRefusal('This single sign-on option is not available (any more).');
    return provider;
  }

  private async configuration(provider: repo.ProviderRow): Promise<oidc.Configuration> {
    try {
      return await this.clients.configuration({ ...provider, client_secret: this.providers.secretOf(provider) });
    } catch (err) {
      this.logger.warn({ err, provider: provider.name, issuer: provider.issuer }, 'single sign-on: the provider could not be reached');
      throw new SsoRefusal(`${provider.name} cannot be reached right now. Please try again later.`);
    }
  }

  /**
   * Providers that issue an access token often keep profile claims out of the ID token (OpenID Connect
   * allows it): when the claims this provider needs are missing, the userinfo endpoint fills them in.
   */
  private async withUserInfo(provider: repo.ProviderRow, config: oidc.Configuration, accessToken: string, idClaims: oidc.IDToken): Promise<Claims> {
    const needed = [provider.username_claim, ...(provider.role_claim ? [provider.role_claim] : [])];
    if (needed.every((name) => claimAt(idClaims, name) !== undefined) || !config.serverMetadata().userinfo_endpoint) return idClaims;
    try {
      const info = await oidc.fetchUserInfo(config, accessToken, idClaims.sub);
      return { ...info, ...idClaims };
    } catch (err) {
      this.logger.warn({ err, provider: provider.name }, 'single sign-on: userinfo could not be read');
      return idClaims;
    }
  }

  private async findOrCreateUser(provider: repo.ProviderRow, issuer: string, subject: string, claims: Claims): Promise<{ user: UserRow; created: boolean }> {
    const now = this.clock.now();
    const linked = await repo.findIdentityUser(this.db, issuer, subject);
    if (linked !== undefined) {
      const user = await findUser(this.db, linked);
      if (user) {
        await repo.touchIdentity(this.db, issuer, subject, now);
        return { user, created: false };
      }
    }
    const named = usernameFrom(claims, provider.username_claim);
    const actor = 'username' in named ? named.username : `${provider.name}:${subject}`.slice(0, 200);
    if (!provider.auto_create) {
      throw new SsoRefusal(`No user here is linked to this ${provider.name} account. Ask an administrator for access.`, actor);
    }
    if ('problem' in named) throw new SsoRefusal(`Your account could not be created: ${named.problem}.`, actor);
    const clash = new SsoRefusal(
      `A user named "${named.username}" already exists here and is not linked to this ${provider.name} account, so you were not signed in as that user. Ask an administrator.`,
      actor,
    );
    if (await findUserByName(this.db, named.username)) throw clash;
    const access = accessFrom(claims, provider);
    let user: UserRow;
    try {
      // A password nobody knows: the user signs in through the provider until an admin sets one.
      user = await this.users.create({ username: named.username, password: randomBytes(24).toString('base64url'), ...access });
    } catch (err) {
      if (err instanceof AppError && err.code === 'CONFLICT') throw clash;
      if (err instanceof AppError && err.code === 'VALIDATION_ERROR') throw new SsoRefusal(`Your account could not be created: ${err.message}. Ask an administrator to fix the ${provider.name} settings.`, actor);
      throw err;
    }
    await repo.insertIdentity(this.db, { issuer, subject, provider_id: provider.id, user_id: user.id }, now);
    return { user, created: true };
  }
}
