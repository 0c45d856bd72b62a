// Who is making a request, once credentials are checked, and the customer-scope rules every feature
// applies: a customer-scoped API key sees only its customer, a customer-scoped user only the customers
// of their set; anything outside is "not found".
import { sql, type Expression, type RawBuilder } from 'kysely';
import { AppError } from '../../platform/errors.js';
import type { Permission, UserRole } from '../../db/schema.js';

export type { Permission, UserRole } from '../../db/schema.js';

export type Caller =
  | {
      kind: 'user';
      userId: number;
      username: string;
      role: UserRole;
      /** The customers the user is limited to, or null for every customer. */
      customerIds: readonly number[] | null;
      /** The session the token names (absent for the server's own callers: scheduler, admin CLI). */
      sessionId?: string;
    }
  | { kind: 'api_key'; keyId: number; name: string; keyHint: string; permission: Permission; customerId: number | null };

/** The customers a caller is limited to, or null for every customer. */
export type CustomerScope = readonly number[] | null;

/** The server acting on its own (scheduler, admin CLI): an unscoped admin. */
export function internalCaller(username: string): Caller {
  return { kind: 'user', userId: 0, username, role: 'admin', customerIds: null };
}

export function scopeOf(caller: Caller): CustomerScope {
  if (caller.kind === 'user') return caller.customerIds;
  return caller.customerId === null ? null : [caller.customerId];
}

/** Whether a customer (or "no customer", null) is visible within the scope. */
export function scopeAllows(scope: CustomerScope, customerId: number | null | undefined): boolean {
  return scope === null || (customerId != null && scope.includes(customerId));
}

/** `column` restricted to the scope, for a where clause (false for an empty set: nothing is visible). */
export function inScopeSql(column: Expression<unknown> | string, scope: readonly number[]): RawBuilder<boolean> {
  const ref = typeof column === 'string' ? sql.ref(column) : column;
  return scope.length === 0 ? sql<boolean>`false` : sql<boolean>`${ref} in (${sql.join(scope.map((id) => sql`${id}`))})`;
}

/**
 * The one customer a scoped caller's new object belongs to when it names none: a scoped key's
 * customer, or the only customer of a user's set. Null for unscoped callers; a user with several
 * customers must say which (400).
 */
export function defaultCustomerOf(caller: Caller, what = 'customer_id'): number | null {
  const scope = scopeOf(caller);
  if (scope === null) return null;
  if (scope.length === 1) return scope[0]!;
  throw new AppError('VALIDATION_ERROR', `${what} is required: you are limited to several customers`);
}

/** 404 for a resource of another customer (or of none, for a scoped caller): existence is not leaked. */
export function assertInScope(caller: Caller, customerId: number | null, what = 'Resource'): void {
  if (!scopeAllows(scopeOf(caller), customerId)) throw new AppError('NOT_FOUND', `${what} not found`);
}

/** Server-wide resources (users, settings, scripts) are not for customer-scoped callers. */
export function requireUnscoped(caller: Caller): void {
  if (scopeOf(caller) !== null) {
    const who = caller.kind === 'user' ? 'A user limited to customers' : 'A customer-scoped API key';
    throw new AppError('FORBIDDEN', `${who} cannot access server-wide resources`);
  }
}

/** What the audit log records as the actor: the username, or the key's hint (never the key). */
export function actorOf(caller: Caller): { actor_type: 'user' | 'api_key'; actor: string } {
  return caller.kind === 'user'
    ? { actor_type: 'user', actor: caller.username }
    : { actor_type: 'api_key', actor: caller.keyHint };
}
