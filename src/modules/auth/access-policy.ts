// Who may call a route (contract §1, "who may call what"), as one pure decision. Every route declares
// one access level; the auth hook asks this function, with the caller and the HTTP method.
import type { Caller, Permission } from './caller.js';

/**
 * - `public`: no credentials needed.
 * - `agent`: what agents and the on-device updater call (agent keys; read keys for GETs; write/admin
 *   keys; users).
 * - `read`: operator reads (read/write/admin keys, users).
 * - `write`: operator changes (write/admin keys, users).
 * - `admin`: admin keys and users.
 * - `user`: logged-in users only (user management, two-factor settings); keys get 403.
 * - `session`: a signed-in user's token is the only credential (the terminal); an API key of any
 *   permission is not one here (401).
 */
export type RouteAccess = 'public' | 'agent' | 'read' | 'write' | 'admin' | 'user' | 'session';

export type AccessDecision = 'allow' | 'unauthenticated' | 'forbidden';

const KEY_LEVELS: Record<Permission, ReadonlySet<RouteAccess>> = {
  agent: new Set(['agent']),
  read: new Set(['agent', 'read']),
  write: new Set(['agent', 'read', 'write']),
  admin: new Set(['agent', 'read', 'write', 'admin']),
};

const READ_METHODS = new Set(['GET', 'HEAD']);

export function decideAccess(access: RouteAccess, caller: Caller | null, method: string): AccessDecision {
  if (access === 'public') return 'allow';
  if (!caller) return 'unauthenticated';
  if (caller.kind === 'user') return 'allow';
  if (access === 'session') return 'unauthenticated';
  if (!KEY_LEVELS[caller.permission].has(access)) return 'forbidden';
  // A read key only ever reads, whatever level the route declares.
  if (caller.permission === 'read' && !READ_METHODS.has(method)) return 'forbidden';
  return 'allow';
}

const RANK: Record<Permission, number> = { agent: 0, read: 1, write: 2, admin: 3 };

/** A key may hand out at most its own permission (agent < read < write < admin). */
export function permissionWithin(requested: Permission, own: Permission): boolean {
  return RANK[requested] <= RANK[own];
}
