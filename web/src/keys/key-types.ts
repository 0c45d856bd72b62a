// API key shapes (contract §1): the list shows only a hint; the key itself exists once, in the answer
// to its creation.
import type { ApiBody, ApiItem } from '../api/api-types';

export type ApiKey = ApiItem<'/apikeys'>;
/** With the key itself, in this answer only. */
export type CreatedApiKey = ApiBody<'/apikeys', 'post'>;
export type Permission = ApiKey['permissions'];

export const PERMISSIONS: readonly { id: Permission; label: string }[] = [
  { id: 'agent', label: 'agent: what an installed agent needs' },
  { id: 'read', label: 'read: view everything in scope' },
  { id: 'write', label: 'write: also change and run commands' },
  { id: 'admin', label: 'admin: also users, keys and settings' },
];

const RANK: Record<Permission, number> = { agent: 0, read: 1, write: 2, admin: 3 };

/** The server's rule: a key or user hands out (and deletes) keys up to its own level (agent < read < write < admin). */
export function permissionWithin(key: Permission, own: Permission): boolean {
  return RANK[key] <= RANK[own];
}
