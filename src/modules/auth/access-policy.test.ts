import { describe, expect, it } from 'vitest';
import { decideAccess, permissionWithin, type RouteAccess } from './access-policy.js';
import type { Caller, Permission } from './caller.js';

const key = (permission: Permission): Caller => ({
  kind: 'api_key',
  keyId: 1,
  name: 'k',
  keyHint: 'rmm_abcd…wxyz',
  permission,
  customerId: null,
});
const user: Caller = { kind: 'user', userId: 1, username: 'admin' };

describe('decideAccess', () => {
  it('lets anyone call public routes', () => {
    expect(decideAccess('public', null, 'POST')).toBe('allow');
  });

  it('asks for credentials everywhere else', () => {
    for (const access of ['agent', 'read', 'write', 'admin', 'user', 'session'] as RouteAccess[]) {
      expect(decideAccess(access, null, 'GET')).toBe('unauthenticated');
    }
  });

  it('lets users call everything', () => {
    for (const access of ['agent', 'read', 'write', 'admin', 'user', 'session'] as RouteAccess[]) {
      expect(decideAccess(access, user, 'DELETE')).toBe('allow');
    }
  });

  // Rows: key permission; columns: route access; value: allowed for GET / allowed for POST.
  const table: Record<Permission, Record<Exclude<RouteAccess, 'public' | 'session'>, [boolean, boolean]>> = {
    agent: { agent: [true, true], read: [false, false], write: [false, false], admin: [false, false], user: [false, false] },
    read: { agent: [true, false], read: [true, false], write: [false, false], admin: [false, false], user: [false, false] },
    write: { agent: [true, true], read: [true, true], write: [true, true], admin: [false, false], user: [false, false] },
    admin: { agent: [true, true], read: [true, true], write: [true, true], admin: [true, true], user: [false, false] },
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
    expect(decideAccess('session', user, 'GET')).toBe('allow');
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
