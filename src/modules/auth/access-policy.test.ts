import { describe, expect, it } from 'vitest';
import { decideAccess, permissionWithin, type RouteAccess } from './access-policy.js';
import type { Caller, Permission, UserRole } from './caller.js';

const key = (permission: Permission): Caller => ({
  kind: 'api_key',
  keyId: 1,
  name: 'k',
  keyHint: 'rmm_abcd…wxyz',
  permission,
  customerId: null,
});
const user = (role: UserRole, customerIds: number[] | null = null): Caller => ({ kind: 'user', userId: 1, username: 'u', role, customerIds });

describe('decideAccess', () => {
  it('lets anyone call public routes', () => {
    expect(decideAccess('public', null, 'POST')).toBe('allow');
  });

  it('asks for credentials everywhere else', () => {
    for (const access of ['agent', 'agent_key', 'read', 'write', 'admin', 'settings', 'user', 'user_admin', 'session'] as RouteAccess[]) {
      expect(decideAccess(access, null, 'GET')).toBe('unauthenticated');
    }
  });

  it('lets an admin user with every customer call everything but what only agents do', () => {
    for (const access of ['agent', 'read', 'write', 'admin', 'settings', 'user', 'user_admin', 'session'] as RouteAccess[]) {
      expect(decideAccess(access, user('admin'), 'DELETE')).toBe('allow');
    }
    expect(decideAccess('agent_key', user('admin'), 'POST')).toBe('forbidden');
  });

  // Rows: user role; columns: route access; value: allowed for GET / allowed for POST.
  const roles: Record<UserRole, Record<Exclude<RouteAccess, 'public'>, [boolean, boolean]>> = {
    read: { agent: [true, false], agent_key: [false, false], read: [true, false], write: [false, false], admin: [false, false], settings: [false, false], user: [true, true], user_admin: [false, false], session: [false, false] },
    write: { agent: [true, true], agent_key: [false, false], read: [true, true], write: [true, true], admin: [false, false], settings: [false, false], user: [true, true], user_admin: [false, false], session: [false, false] },
    admin: { agent: [true, true], agent_key: [false, false], read: [true, true], write: [true, true], admin: [true, true], settings: [true, true], user: [true, true], user_admin: [true, true], session: [true, true] },
  };
  for (const [role, row] of Object.entries(roles) as [UserRole, (typeof roles)['read']][]) {
    for (const [access, [get, post]] of Object.entries(row) as [RouteAccess, [boolean, boolean]][]) {
      it(`${role} user on ${access} route: GET ${get ? 'allowed' : 'forbidden'}, POST ${post ? 'allowed' : 'forbidden'}`, () => {
        expect(decideAccess(access, user(role), 'GET')).toBe(get ? 'allow' : 'forbidden');
        expect(decideAccess(access, user(role), 'POST')).toBe(post ? 'allow' : 'forbidden');
      });
    }
  }

  it('keeps an admin limited to customers away from user management and the terminal', () => {
    expect(decideAccess('user_admin', user('admin', [3]), 'POST')).toBe('forbidden');
    expect(decideAccess('session', user('admin', [3]), 'GET')).toBe('forbidden');
    expect(decideAccess('settings', user('admin', [3]), 'PUT')).toBe('allow'); // the service refuses scoped callers
    expect(decideAccess('user', user('read', []), 'POST')).toBe('allow');
  });

  // Rows: key permission; columns: route access; value: allowed for GET / allowed for POST.
  const table: Record<Permission, Record<Exclude<RouteAccess, 'public' | 'session'>, [boolean, boolean]>> = {
    agent: { agent: [true, true], agent_key: [true, true], read: [false, false], write: [false, false], admin: [false, false], settings: [false, false], user: [false, false], user_admin: [false, false] },
    read: { agent: [true, false], agent_key: [false, false], read: [true, false], write: [false, false], admin: [false, false], settings: [false, false], user: [false, false], user_admin: [false, false] },
    write: { agent: [true, true], agent_key: [false, false], read: [true, true], write: [true, true], admin: [false, false], settings: [true, true], user: [false, false], user_admin: [false, false] },
    admin: { agent: [true, true], agent_key: [false, false], read: [true, true], write: [true, true], admin: [true, true], settings: [true, true], user: [false, false], user_admin: [false, false] },
  };
  for (const [permission, row] of Object.entries(table) as [Permission, (typeof table)['agent']][]) {
    for (const [access, [get, post]] of Object.entries(row) as [RouteAccess, [boolean, boolean]][]) {
      it(`${permission} key on ${access} route: GET ${get ? 'allowed' : 'forbidden'}, POST ${post ? 'allowed' : 'forbidden'}`, () => {
        expect(decideAccess(access, key(permission), 'GET')).toBe(get ? 'allow' : 'forbidden');
        expect(decideAccess(access, key(permission), 'POST')).toBe(post ? 'allow' : 'forbidden');
      });
    }
  }
});

describe('session routes (the terminal)', () => {
  it('take a user only: a key of any permission is not a credential there (401, not 403)', () => {
    expect(decideAccess('session', user('admin'), 'GET')).toBe('allow');
    for (const permission of ['agent', 'read', 'write', 'admin'] as Permission[]) {
      expect(decideAccess('session', key(permission), 'GET')).toBe('unauthenticated');
    }
    expect(decideAccess('session', null, 'GET')).toBe('unauthenticated');
  });
});

describe('permissionWithin', () => {
  it('orders agent < read < write < admin', () => {
    expect(permissionWithin('admin', 'write')).toBe(false);
    expect(permissionWithin('write', 'write')).toBe(true);
    expect(permissionWithin('agent', 'read')).toBe(true);
    expect(permissionWithin('read', 'agent')).toBe(false);
  });
});
