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
}

export interface CreatedApiKey extends ApiKey {
  key: string;
}
