// Who is making a request, once credentials are checked, and the customer-scope rules every feature
// applies: a customer-scoped API key sees only that customer; anything outside is "not found".
import { AppError } from '../../platform/errors.js';
import type { Permission } from '../../db/schema.js';

export type { Permission } from '../../db/schema.js';

export type Caller =
  | { kind: 'user'; userId: number; username: string }
  | { kind: 'api_key'; keyId: number; name: string; keyHint: string; permission: Permission; customerId: number | null };

/** The customer a caller is limited to, or null for every customer. */
export type CustomerScope = number | null;

export function scopeOf(caller: Caller): CustomerScope {
  return caller.kind === 'api_key' ? caller.customerId : null;
}

/** 404 for a resource of another customer (or of none, for a scoped caller): existence is not leaked. */
export function assertInScope(caller: Caller, customerId: number | null, what = 'Resource'): void {
  const scope = scopeOf(caller);
  if (scope !== null && customerId !== scope) throw new AppError('NOT_FOUND', `${what} not found`);
}

/** Server-wide resources (users, settings, audit log) are not for customer-scoped keys. */
export function requireUnscoped(caller: Caller): void {
  if (scopeOf(caller) !== null) {
    throw new AppError('FORBIDDEN', 'A customer-scoped API key cannot access server-wide resources');
  }
}

/** What the audit log records as the actor: the username, or the key's hint (never the key). */
export function actorOf(caller: Caller): { actor_type: 'user' | 'api_key'; actor: string } {
  return caller.kind === 'user'
    ? { actor_type: 'user', actor: caller.username }
    : { actor_type: 'api_key', actor: caller.keyHint };
}
