// Managing single sign-on: the providers (their client secrets sealed at rest and shown only as hints)
// and whether users other than admins may still sign in with a password.
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/db-errors.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { existingCustomerIds } from '../customers/customers.repo.js';
import { readSettings, writeSettings } from '../settings/settings.repo.js';
import type { UserRow } from '../users/users.repo.js';
import { issuerProblem, type OidcClients } from './oidc-clients.js';
import * as repo from './sso.repo.js';

export type PasswordLogin = 'everyone' | 'admins_only';

/** The settings row that holds the password sign-in switch. */
const PASSWORD_LOGIN_KEY = 'password_login';

/** The redirect URI a provider sends the browser back to, under the console's origin. */
export function redirectUriOf(origin: string, providerId: number): string {
  return `${origin}/api/v1/auth/sso/${providerId}/callback`;
}

export class SsoProviderService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly clients: OidcClients,
    private readonly clock: Clock,
  ) {}

  list(): Promise<repo.ProviderRow[]> {
    return repo.listProviders(this.db);
  }

  async get(id: number): Promise<repo.ProviderRow> {
    const row = await repo.findProvider(this.db, id);
    if (!row) throw new AppError('NOT_FOUND', 'Single sign-on provider not found');
    return row;
  }

  /** The stored secret in clear text (for its hint and for the provider's client). */
  secretOf(row: repo.ProviderRow): string {
    return this.box.open(row.client_secret);
  }

  async create(values: repo.ProviderValues): Promise<repo.ProviderRow> {
    await this.check(values);
    try {
      return await repo.insertProvider(this.db, { ...values, client_secret: this.box.seal(values.client_secret) }, this.clock.now());
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('CONFLICT', `A provider named ${values.name} already exists`);
      throw err;
    }
  }

  async update(id: number, patch: Partial<repo.ProviderValues>): Promise<repo.ProviderRow> {
    await this.check(patch);
    const sealed = patch.client_secret === undefined ? patch : { ...patch, client_secret: this.box.seal(patch.client_secret) };
    let row: repo.ProviderRow | undefined;
    try {
      row = await repo.updateProvider(this.db, id, sealed, this.clock.now());
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('CONFLICT', `A provider named ${patch.name ?? ''} already exists`);
      throw err;
    }
    if (!row) throw new AppError('NOT_FOUND', 'Single sign-on provider not found');
    this.clients.forget(id);
    return row;
  }

  /** Deletes the provider; users it created stay (with the passwords nobody knows) and its identities stay linked. */
  async delete(id: number): Promise<void> {
    if (!(await repo.deleteProvider(this.db, id))) throw new AppError('NOT_FOUND', 'Single sign-on provider not found');
    this.clients.forget(id);
  }

  async passwordLogin(): Promise<PasswordLogin> {
    return (await readSettings(this.db)).get(PASSWORD_LOGIN_KEY) === 'admins_only' ? 'admins_only' : 'everyone';
  }

  async setPasswordLogin(mode: PasswordLogin): Promise<void> {
    await writeSettings(this.db, { [PASSWORD_LOGIN_KEY]: mode === 'everyone' ? null : mode }, this.clock.now());
  }

  /**
   * The hook the password login asks (AuthService.addPasswordSignInRule): admins always may, so
   * turning password sign-in off can never lock the server's administrators out when a provider fails.
   */
  async passwordSignInAllowed(user: UserRow): Promise<boolean> {
    return user.role === 'admin' || (await this.passwordLogin()) === 'everyone';
  }

  /** 400 for an issuer that is not https (or loopback http) and for customers that do not exist. */
  private async check(values: Partial<repo.ProviderValues>): Promise<void> {
    const problems: Array<{ path: string; message: string }> = [];
    if (values.issuer !== undefined) {
      const problem = issuerProblem(values.issuer);
      if (problem) problems.push({ path: 'issuer', message: problem });
    }
    const named: Array<[path: string, ids: readonly number[]]> = [];
    if (values.default_customer_ids) named.push(['default_customer_ids', values.default_customer_ids]);
    values.mappings?.forEach((m, i) => m.customer_ids && named.push([`mappings.${i}.customer_ids`, m.customer_ids]));
    const all = [...new Set(named.flatMap(([, ids]) => ids))];
    const found = new Set(all.length > 0 ? await existingCustomerIds(this.db, all) : []);
    for (const [path, ids] of named) {
      for (const id of ids) if (!found.has(id)) problems.push({ path, message: `customer ${id} does not exist` });
    }
    if (problems.length > 0) throw new AppError('VALIDATION_ERROR', problems.map((p) => `${p.path}: ${p.message}`).join('; '), { details: problems });
  }
}
