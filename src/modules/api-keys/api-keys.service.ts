// API keys (contract §1): created with a permission and an optional customer scope, shown once, stored
// as SHA-256. A key never creates or deletes a key above its own permission or outside its scope.
import type { Kysely } from 'kysely';
import type { Database, Permission } from '../../db/schema.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { permissionWithin } from '../auth/access-policy.js';
import { assertInScope, scopeOf, type Caller } from '../auth/caller.js';
import { findCustomer } from '../customers/customers.repo.js';
import * as repo from './api-keys.repo.js';
import { generateApiKey, hashApiKey, keyHint } from './key-format.js';

export type ApiKey = repo.ApiKeyRow;

export interface NewApiKey {
  name: string;
  permissions: Permission;
  customer_id?: number | null | undefined;
}

/**
 * Every agent request presents a key, so lookups are cached briefly. Deleting a key (or its customer)
 * forgets the cache at once, here and (cluster mode, over the bus) on the other instances; an instance
 * that missed the message (the bus was down) notices within the TTL.
 */
const CACHE_TTL_MS = 10_000;
const CACHE_MAX_ENTRIES = 20_000;

export class ApiKeyService {
  readonly #cache = new Map<string, { caller: Caller; expiresAt: number }>();
  /** Cluster mode: tells the other instances to forget their cached lookups too (a revoked key stops everywhere). */
  onKeysDeleted: () => void = () => undefined;

  constructor(private readonly db: Kysely<Database>) {}

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
    if (caller.kind === 'api_key') {
      if (!permissionWithin(input.permissions, caller.permission)) {
        throw new AppError('FORBIDDEN', `A ${caller.permission} key cannot create a ${input.permissions} key`);
      }
      if (caller.customerId !== null && customerId === null) {
        throw new AppError('FORBIDDEN', 'A customer-scoped key can only create keys for its own customer');
      }
    }
    if (customerId !== null) {
      assertInScope(caller, customerId, 'Customer');
      if (!(await findCustomer(this.db, customerId))) throw new AppError('NOT_FOUND', 'Customer not found');
    }
    const key = generateApiKey();
    const row = await repo.insertApiKey(this.db, {
      name: input.name,
      key_hash: hashApiKey(key),
      key_hint: keyHint(key),
      permissions: input.permissions,
      customer_id: customerId,
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
    return repo.listApiKeys(this.db, customerId, page);
  }

  async delete(caller: Caller, id: number): Promise<void> {
    const key = await repo.findApiKey(this.db, id);
    if (!key) throw new AppError('NOT_FOUND', 'API key not found');
    if (scopeOf(caller) !== null) assertInScope(caller, key.customer_id, 'API key');
    if (caller.kind === 'api_key' && !permissionWithin(key.permissions, caller.permission)) {
      throw new AppError('FORBIDDEN', `A ${caller.permission} key cannot delete a ${key.permissions} key`);
    }
    await repo.deleteApiKey(this.db, id);
    this.forgetCachedKeys();
  }

  /** The caller a presented key stands for, or null when it is unknown. */
  async authenticate(presented: string): Promise<Caller | null> {
    if (presented.length < 8 || presented.length > 200) return null;
    const hash = hashApiKey(presented);
    const now = performance.now();
    const cached = this.#cache.get(hash);
    if (cached && cached.expiresAt > now) return cached.caller;
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
    this.#cache.set(hash, { caller, expiresAt: now + CACHE_TTL_MS });
    return caller;
  }
}
