// What a provider's claims mean here: the username, the role and customers a new user gets, and whether
// the provider vouches for a second factor. Pure functions, so the rules are tested without a provider.
import type { UserRole } from '../../db/schema.js';
import type { SsoMapping } from '../../db/schema-sso.js';

export type Claims = Readonly<Record<string, unknown>>;

/** The same rule as for usernames typed in (users.schemas.ts). */
const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;

/**
 * A claim by name; a dotted name reaches into objects (`realm_access.roles`) when no claim has the
 * whole name, as some providers nest their role lists.
 */
export function claimAt(claims: Claims, name: string): unknown {
  if (name in claims) return claims[name];
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A claim's text values: a string is one, an array gives its strings; anything else none. */
export function claimValues(claims: Claims, name: string): string[] {
  const value = claimAt(claims, name);
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/**
 * The username a new user gets from the provider's claim, lower-cased (providers differ in how they
 * spell an address; usernames here are matched without case anyway), or why there is none.
 */
export function usernameFrom(claims: Claims, claim: string): { username: string } | { problem: string } {
  const value = claimAt(claims, claim);
  if (typeof value !== 'string' || value.trim() === '') return { problem: `the provider sent no "${claim}" claim to name the user` };
  const username = value.trim().toLowerCase();
  if (!USERNAME.test(username)) return { problem: `the "${claim}" claim (${username.slice(0, 80)}) is not a valid username here` };
  return { username };
}

export interface MappingRules {
  role_claim: string | null;
  mappings: readonly SsoMapping[];
  default_role: UserRole;
  default_customer_ids: readonly number[] | null;
}

/**
 * The role and customers of a user created by a sign-in: the first rule whose value the role claim
 * holds decides (rules are checked in the order the admin gave them); without a match, the defaults.
 */
export function accessFrom(claims: Claims, rules: MappingRules): { role: UserRole; customer_ids: number[] | null } {
  const held = rules.role_claim ? new Set(claimValues(claims, rules.role_claim)) : new Set<string>();
  const rule = rules.mappings.find((m) => held.has(m.value));
  if (rule) return { role: rule.role, customer_ids: rule.customer_ids === null ? null : [...rule.customer_ids] };
  return { role: rules.default_role, customer_ids: rules.default_customer_ids === null ? null : [...rules.default_customer_ids] };
}

/** The provider says the user did more than one factor (RFC 8176 `amr` value `mfa`). */
export function providerDidMfa(claims: Claims): boolean {
  const amr = claims.amr;
  return Array.isArray(amr) && amr.includes('mfa');
}
