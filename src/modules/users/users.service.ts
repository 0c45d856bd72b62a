// Users: the people who sign in (contract §1). Only logged-in users manage users; customer-scoped keys
// cannot even list them.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/db-errors.js';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { requireUnscoped, type Caller } from '../auth/caller.js';
import type { PasswordHasher } from './passwords.js';
import { disableTotp } from '../auth/auth.repo.js';
import * as repo from './users.repo.js';
import type { UserRole } from '../../db/schema.js';
import { existingCustomerIds } from '../customers/customers.repo.js';

export type User = repo.UserRow;

export const INITIAL_ADMIN = 'admin';

export class UserService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly passwords: PasswordHasher,
  ) {}

  list(caller: Caller, page: PageRequest): Promise<Page<User>> {
    requireUnscoped(caller);
    return repo.listUsers(this.db, page);
  }

  async create(input: { username: string; password: string; role?: UserRole; customer_ids?: readonly number[] | null }): Promise<User> {
    const customerIds = input.customer_ids ?? null;
    if (customerIds !== null) await this.requireCustomers(customerIds);
    const password_hash = await this.passwords.hash(input.password);
    try {
      return await repo.insertUser(this.db, { username: input.username, password_hash, role: input.role ?? 'admin', customer_ids: customerIds });
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('CONFLICT', `User ${input.username} already exists`);
      throw err;
    }
  }

  /** Changes role and customers; the user's sessions end (their tokens carried the old rights). */
  async changeAccess(id: number, change: { role?: UserRole | undefined; customer_ids?: readonly number[] | null | undefined }): Promise<User> {
    if (change.customer_ids) await this.requireCustomers(change.customer_ids);
    const outcome = await repo.changeAccess(this.db, id, change);
    if (outcome === 'missing') throw new AppError('NOT_FOUND', 'User not found');
    if (outcome === 'last_admin') throw new AppError('CONFLICT', 'This is the last admin with every customer; make another user one first');
    return outcome;
  }

  async get(id: number): Promise<User> {
    const user = await repo.findUser(this.db, id);
    if (!user) throw new AppError('NOT_FOUND', 'User not found');
    return user;
  }

  /** 400 naming each customer id that does not exist. */
  private async requireCustomers(ids: readonly number[]): Promise<void> {
    const found = new Set(await existingCustomerIds(this.db, ids));
    const problems = ids.flatMap((id, i) => (found.has(id) ? [] : [{ path: `customer_ids.${i}`, message: `customer ${id} does not exist` }]));
    if (problems.length > 0) throw new AppError('VALIDATION_ERROR', problems.map((p) => p.message).join('; '), { details: problems });
  }

  /** Sets the password and ends all of the user's sessions. */
  async setPassword(id: number, password: string): Promise<void> {
    if (!(await repo.setPassword(this.db, id, await this.passwords.hash(password)))) {
      throw new AppError('NOT_FOUND', 'User not found');
    }
  }

  async getByName(username: string): Promise<User> {
    const user = await repo.findUserByName(this.db, username);
    if (!user) throw new AppError('NOT_FOUND', `User ${username} not found`);
    return user;
  }

  /** For the admin CLI: a user who lost the authenticator. Ends the user's sessions too. */
  async disableTwoFactorByName(username: string): Promise<User> {
    const user = await this.getByName(username);
    await disableTotp(this.db, user.id);
    return user;
  }

  async delete(id: number): Promise<void> {
    const outcome = await repo.deleteUserUnlessLast(this.db, id);
    if (outcome === 'missing') throw new AppError('NOT_FOUND', 'User not found');
    if (outcome === 'last') throw new AppError('CONFLICT', 'The last user cannot be deleted');
    if (outcome === 'last_admin') throw new AppError('CONFLICT', 'The last admin with every customer cannot be deleted; make another user one first');
  }

  /**
   * First start: with no users at all, creates `admin` with the given password or a generated one
   * (returned so the caller can show it once). Never touches an existing user.
   */
  async ensureInitialAdmin(password: string | undefined): Promise<{ generatedPassword?: string } | undefined> {
    if ((await repo.countUsers(this.db)) > 0) return undefined;
    const chosen = password ?? randomBytes(18).toString('base64url');
    try {
      await this.create({ username: INITIAL_ADMIN, password: chosen });
    } catch (err) {
      // Another server sharing the database created it first.
      if (err instanceof AppError && err.code === 'CONFLICT') return undefined;
      throw err;
    }
    return password ? {} : { generatedPassword: chosen };
  }
}
