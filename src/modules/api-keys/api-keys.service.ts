// API keys (contract §1): created with a permission and an optional customer scope, shown once, stored
// as SHA-256. A key never creates or deletes a key above its own permission or outside its scope.
// Enrollment keys (issue 33) are keys with an expiry time or a number of uses (installs); an expired
// or used-up key answers 401 everywhere.
import type { Kysely } from 'kysely';
import type { Database, Permission } from '../../db/schema.js';
import { systemClock, type Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { levelOf, permissionWithin } from '../auth/access-policy.js';
import { assertInScope, scopeOf, type Caller } from '../auth/caller.js';
import { findCustomer } from '../customers/customers.repo.js';
import * as repo from './api-keys.repo.js';
import { generateApiKey, hashApiKey, keyHint } from './key-format.js';

export type ApiKey = repo.ApiKeyRow;

export interface NewApiKey {
  name: string;
  permissions: Permission;
  customer_id?: number | null | undefined;
  expires_at?: Date | null | undefined;
  max_uses?: number | null | undefined;
}

/** Why a key no longer works, or null while it does. */
export function keyExpiry(key: Pick<ApiKey, 'expires_at' | 'max_uses' | 'uses'>, now: Date): string | null {
  if (key.expires_at !== null && key.expires_at.getTime() <= now.getTime()) return `API key expired at ${key.expires_at.toISOString()}`;
  if (key.max_uses !== null && key.uses >= key.max_uses) return `API key used up (${key.max_uses} of ${key.max_uses} uses)`;
  return null;
}

const expiredKey = (message: string) => new AppError('UNAUTHORIZED', message, { headers: { 'www-authenticate': 'Bearer realm="rmm"' } });

/**
 * Every agent request presents a key, so lookups are cached briefly. Deleting a key (or its customer)
 * forgets the cache at once, here and (cluster mode, over the bus) on the other instances; an instance
 * that missed the message (the bus was down) notices within the TTL.
 */
const CACHE_TTL_MS = 10_000;
const CACHE_MAX_ENTRIES = 20_000;

export class ApiKeyService {
  readonly #cache = new Map<string, { caller: Caller; key: ApiKey; expiresAt: number }>();
  /** Told when keys were deleted (the core feature announces `api-keys.deleted`; a cluster tells the other instances, so a revoked key stops everywhere). */
  onKeysDeleted: () => void = () => undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Drops every cached key lookup (after keys were deleted by any route), here and, in a cluster, everywhere. */
  forgetCachedKeys(): void {
    this.forgetCachedKeysHere();
    this.onKeysDeleted();
  }

  /** Drops this instance's cached lookups only (told by another instance). */
  forgetCachedKeysHere(): void {
    this.#cache.clear();
  }

  async create(caller: Caller, input: NewApiKey): Promise<ApiKey & { key: string }> {
    const customerId = input.customer_id ?? null;
    const own = levelOf(caller);
    if (!permissionWithin(input.permissions, own)) {
      throw new AppError('FORBIDDEN', `A ${own} ${caller.kind === 'user' ? 'user' : 'key'} cannot create a ${input.permissions} key`);
    }
    if (scopeOf(caller) !== null && customerId === null) {
      throw new AppError('FORBIDDEN', caller.kind === 'user'
        ? 'A user limited to customers can only create keys for one of those customers'
        : 'A customer-scoped key can only create keys for its own customer');
    }
    if (customerId !== null) {
      assertInScope(caller, customerId, 'Customer');
      if (!(await findCustomer(this.db, customerId))) throw new AppError('NOT_FOUND', 'Customer not found');
    }
    const expiresAt = input.expires_at ?? null;
    if (expiresAt !== null && expiresAt.getTime() <= this.clock.now().getTime()) {
      throw new AppError('VALIDATION_ERROR', 'expires_at must be in the future', { details: [{ path: 'expires_at', message: 'must be in the future' }] });
    }
    const key = generateApiKey();
    const row = await repo.insertApiKey(this.db, {
      name: input.name,
      key_hash: hashApiKey(key),
      key_hint: keyHint(key),
      permissions: input.permissions,
      customer_id: customerId,
      expires_at: expiresAt,
      max_uses: input.max_uses ?? null,
    });
    return { ...row, key };
  }

  list(caller: Caller, page: PageRequest): Promise<Page<ApiKey>> {
    return repo.listApiKeys(this.db, scopeOf(caller), page);
  }

  /** Keys scoped to one customer; the caller must be allowed to see that customer. */
  async listOfCustomer(caller: Caller, customerId: number, page: PageRequest): Promise<Page<ApiKey>> {
    assertInScope(caller, customerId, 'Customer');
    if (!(await findCustomer(this.db, customerId))) throw new AppError('NOT_FOUND', 'Customer not found');
    return repo.listApiKeys(this.db, [customerId], page);
  }

  async delete(caller: Caller, id: number): Promise<void> {
    const key = await repo.findApiKey(this.db, id);
    if (!key) throw new AppError('NOT_FOUND', 'API key not found');
    if (scopeOf(caller) !== null) assertInScope(caller, key.customer_id, 'API key');
    if (!permissionWithin(key.permissions, levelOf(caller))) {
      throw new AppError('FORBIDDEN', `A ${levelOf(caller)} ${caller.kind === 'user' ? 'user' : 'key'} cannot delete a ${key.permissions} key`);
    }
    await repo.deleteApiKey(this.db, id);
    this.forgetCachedKeys();
  }

  /**
   * Counts one use (an install) of the caller's key: 401 when it is expired or used up meanwhile, and
   * nothing is counted. Callers that are not keys pass.
   */
  async countUse(caller: Caller): Promise<void> {
    if (caller.kind !== 'api_key') return;
    const key = await repo.countUse(this.db, caller.keyId, this.clock.now());
    if (!key) {
      const current = await repo.findApiKey(this.db, caller.keyId);
      throw expiredKey((current && keyExpiry(current, this.clock.now())) ?? 'Invalid API key');
    }
    // Its last use: the cached lookups must not let it in for another 10 s.
    if (key.max_uses !== null && key.uses >= key.max_uses) this.forgetCachedKeys();
  }

  /** The caller a presented key stands for, or null when it is unknown; 401 (thrown) for an expired or used-up key. */
  async authenticate(presented: string): Promise<Caller | null> {
    if (presented.length < 8 || presented.length > 200) return null;
    const hash = hashApiKey(presented);
    const now = performance.now();
    const cached = this.#cache.get(hash);
    if (cached && cached.expiresAt > now) return this.unlessExpired(cached.key, cached.caller);
    const key = await repo.findApiKeyByHash(this.db, hash);
    if (!key) return null;
    const caller: Caller = {
      kind: 'api_key',
      keyId: key.id,
      name: key.name,
      keyHint: key.key_hint,
      permission: key.permissions,
      customerId: key.customer_id,
    };
    if (this.#cache.size >= CACHE_MAX_ENTRIES) this.#cache.clear();
    this.#cache.set(hash, { caller, key, expiresAt: now + CACHE_TTL_MS });
    return this.unlessExpired(key, caller);
  }

  private unlessExpired(key: ApiKey, caller: Caller): Caller {
    const expiry = keyExpiry(key, this.clock.now());
    if (expiry) throw expiredKey(expiry);
    return caller;
  }
}
