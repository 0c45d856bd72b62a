import { describe, expect, it } from 'vitest';
import { accessFrom, claimValues, providerDidMfa, usernameFrom } from './claim-mapping.js';

const rules = {
  role_claim: 'groups',
  mappings: [
    { value: 'rmm-admins', role: 'admin' as const, customer_ids: null },
    { value: 'bakery', role: 'write' as const, customer_ids: [7] },
  ],
  default_role: 'read' as const,
  default_customer_ids: [],
};

describe('claim mapping', () => {
  it('names the user from the configured claim, lower-cased, and refuses what is no username', () => {
    expect(usernameFrom({ preferred_username: 'Anna@Contoso.com' }, 'preferred_username')).toEqual({ username: 'anna@contoso.com' });
    expect(usernameFrom({ email: 'a b@x' }, 'email')).toHaveProperty('problem');
    expect(usernameFrom({}, 'email')).toEqual({ problem: 'the provider sent no "email" claim to name the user' });
    expect(usernameFrom({ email: 42 }, 'email')).toHaveProperty('problem');
  });

  it('takes the first rule the role claim matches, else the defaults', () => {
    expect(accessFrom({ groups: ['bakery', 'rmm-admins'] }, rules)).toEqual({ role: 'admin', customer_ids: null });
    expect(accessFrom({ groups: 'bakery' }, rules)).toEqual({ role: 'write', customer_ids: [7] });
    expect(accessFrom({ groups: ['other'] }, rules)).toEqual({ role: 'read', customer_ids: [] });
    expect(accessFrom({ groups: ['rmm-admins'] }, { ...rules, role_claim: null })).toEqual({ role: 'read', customer_ids: [] });
  });

  it('reads nested role lists by a dotted name', () => {
    expect(claimValues({ realm_access: { roles: ['a', 1, 'b'] } }, 'realm_access.roles')).toEqual(['a', 'b']);
    expect(claimValues({ 'a.b': 'x' }, 'a.b')).toEqual(['x']);
  });

  it('counts a second factor only when amr says mfa', () => {
    expect(providerDidMfa({ amr: ['pwd', 'mfa'] })).toBe(true);
    expect(providerDidMfa({ amr: ['pwd'] })).toBe(false);
    expect(providerDidMfa({ amr: 'mfa' })).toBe(false);
    expect(providerDidMfa({})).toBe(false);
  });
});
