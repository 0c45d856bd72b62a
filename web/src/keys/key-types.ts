// API key shapes (contract §1): the list shows only a hint; the key itself exists once, in the answer
// to its creation.
export type Permission = 'agent' | 'read' | 'write' | 'admin';

export const PERMISSIONS: readonly { id: Permission; label: string }[] = [
  { id: 'agent', label: 'agent: what an installed agent needs' },
  { id: 'read', label: 'read: view everything in scope' },
  { id: 'write', label: 'write: also change and run commands' },
  { id: 'admin', label: 'admin: also users, keys and settings' },
];

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
