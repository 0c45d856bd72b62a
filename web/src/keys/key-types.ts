// API key shapes (contract §1): the list shows only a hint; the key itself exists once, in the answer
// to its creation.
export type Permission = 'agent' | 'read' | 'write' | 'admin';

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

export interface ApiKey {
  id: number;
  name: string;
  key_hint: string;
  permissions: Permission;
  customer_id: number | null;
  created_at: string;
  /** Enrollment keys: when it stops working (null: never). */
  expires_at: string | null;
  /** Enrollment keys: installs it may make (null: unlimited). */
  max_uses: number | null;
  uses: number;
  /** Past its time or its last use: every request with it is refused. */
  expired: boolean;
}

export interface CreatedApiKey extends ApiKey {
  key: string;
}
