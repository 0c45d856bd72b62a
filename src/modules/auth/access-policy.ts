// Who may call a route (contract §1, "who may call what"; issue 35 for user roles), as one pure
// decision. Every route declares one access level; the auth hook asks this function, with the caller
// and the HTTP method. API keys and users climb the same ladder (read < write < admin); a few levels
// exist for users only, and one for agent keys only.
import type { Caller, Permission, UserRole } from './caller.js';

/**
 * - `public`: no credentials needed.
 * - `agent`: what agents and the on-device updater call (agent keys; read keys and read users for GETs;
 *   write/admin keys and users).
 * - `agent_key`: what only an agent does: registering (issue 57). Agent keys only; every other key and
 *   every user 403, so no operator credential can register, or claim, an agent.
 * - `read`: operator reads (read/write/admin keys and users).
 * - `write`: operator changes (write/admin keys and users).
 * - `admin`: admin keys and admin users.
 * - `settings`: server settings changes: write/admin keys (contract §1) and admin users.
 * - `user`: a signed-in user's own account (two-factor, passkeys, sessions, sign-out), any role; keys 403.
 * - `user_admin`: managing other users: admin users with every customer; keys 403.
 * - `session`: the server's terminal: a signed-in admin user with every customer, whose token is the only
 *   credential; an API key of any permission is not one here (401).
 */
export type RouteAccess = 'public' | 'agent' | 'agent_key' | 'read' | 'write' | 'admin' | 'settings' | 'user' | 'user_admin' | 'session';

export type AccessDecision = 'allow' | 'unauthenticated' | 'forbidden';

const KEY_LEVELS: Record<Permission, ReadonlySet<RouteAccess>> = {
  agent: new Set(['agent', 'agent_key']),
  read: new Set(['agent', 'read']),
  write: new Set(['agent', 'read', 'write', 'settings']),
  admin: new Set(['agent', 'read', 'write', 'admin', 'settings']),
};

const USER_LEVELS: Record<UserRole, ReadonlySet<RouteAccess>> = {
  read: new Set(['agent', 'read', 'user']),
  write: new Set(['agent', 'read', 'write', 'user']),
  admin: new Set(['agent', 'read', 'write', 'admin', 'settings', 'user', 'user_admin', 'session']),
};

/** Levels that reach beyond any customer: a user limited to customers may not use them. */
const SERVER_WIDE: ReadonlySet<RouteAccess> = new Set(['user_admin', 'session']);

const READ_METHODS = new Set(['GET', 'HEAD']);

export function decideAccess(access: RouteAccess, caller: Caller | null, method: string): AccessDecision {
  if (access === 'public') return 'allow';
  if (!caller) return 'unauthenticated';
  if (caller.kind === 'api_key') {
    if (access === 'session') return 'unauthenticated';
    if (!KEY_LEVELS[caller.permission].has(access)) return 'forbidden';
  } else {
    if (!USER_LEVELS[caller.role].has(access)) return 'forbidden';
    if (SERVER_WIDE.has(access) && caller.customerIds !== null) return 'forbidden';
    // Everyone manages their own account (signs out, sets up two-factor), whatever their role.
    if (access === 'user') return 'allow';
  }
  // Read keys and read users only ever read, whatever level the route declares.
  if (levelOf(caller) === 'read' && !READ_METHODS.has(method)) return 'forbidden';
  return 'allow';
}

/** A caller's place on the ladder: a key's permission or a user's role. */
export function levelOf(caller: Caller): Permission {
  return caller.kind === 'api_key' ? caller.permission : caller.role;
}

const RANK: Record<Permission, number> = { agent: 0, read: 1, write: 2, admin: 3 };

/** A caller may hand out at most its own permission (agent < read < write < admin). */
export function permissionWithin(requested: Permission, own: Permission): boolean {
  return RANK[requested] <= RANK[own];
}
