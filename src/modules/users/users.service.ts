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

  async create(username: string, password: string): Promise<User> {
    const password_hash = await this.passwords.hash(password);
    try {
      return await repo.insertUser(this.db, { username, password_hash });
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('CONFLICT', `User ${username} already exists`);
      throw err;
    }
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
  }

  /**
   * First start: with no users at all, creates `admin` with the given password or a generated one
   * (returned so the caller can show it once). Never touches an existing user.
   */
  async ensureInitialAdmin(password: string | undefined): Promise<{ generatedPassword?: string } | undefined> {
    if ((await repo.countUsers(this.db)) > 0) return undefined;
    const chosen = password ?? randomBytes(18).toString('base64url');
    try {
      await this.create(INITIAL_ADMIN, chosen);
    } catch (err) {
      // Another server sharing the database created it first.
      if (err instanceof AppError && err.code === 'CONFLICT') return undefined;
      throw err;
    }
    return password ? {} : { generatedPassword: chosen };
  }
}
