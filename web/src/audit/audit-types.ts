// An audit log entry as GET /audit returns it.
export interface AuditEntry {
  id: number;
  time: string;
  actor_type: 'user' | 'api_key';
  actor: string;
  action: string;
  method: string;
  path: string;
  status_code: number;
  ip: string;
  /** The object changed, named ("agent demo-3 (Bäckerei …)"); null or absent from older servers. */
  target?: string | null;
}
