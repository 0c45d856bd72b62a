// Which object an audited request changed, named for people: "agent demo-3 (Bäckerei Sonnenschein
// GmbH)", "customer 10001 Bäckerei Sonnenschein GmbH", "user anna". The path alone (`POST
// /api/v1/agents`) does not say which agent. A route names its object by its first path segment and
// its `:id` parameter, or, when it creates one, by the `id` in its answer; the name is looked up when the
// entry is written (audit.repo.ts), or, for a deletion, before the object is gone.

/** The kinds of object the log names, keyed by the first path segment after /api/v1. */
const KIND_BY_SEGMENT = {
  agents: 'agent',
  customers: 'customer',
  users: 'user',
  tasks: 'task',
  apikeys: 'api_key',
  firmware: 'firmware',
  'alert-rules': 'alert_rule',
  alerts: 'alert',
  'notification-channels': 'notification_channel',
  'maintenance-windows': 'maintenance_window',
  scripts: 'script',
  'bulk-actions': 'bulk_action',
} as const;

export type TargetKind = (typeof KIND_BY_SEGMENT)[keyof typeof KIND_BY_SEGMENT];

/** How a kind reads when its object cannot be looked up (unknown id, or no lookup for the kind). */
export const KIND_LABEL: Record<TargetKind, string> = {
  agent: 'agent',
  customer: 'customer',
  user: 'user',
  task: 'task',
  api_key: 'API key',
  firmware: 'firmware',
  alert_rule: 'alert rule',
  alert: 'alert',
  notification_channel: 'notification channel',
  maintenance_window: 'maintenance window',
  script: 'script',
  bulk_action: 'bulk action',
};

/** An object to be named: a kind and the id the request gave (any text a caller sent). */
export interface TargetRef {
  kind: TargetKind;
  id: string;
}

/** What a request says about its object: a reference to look up, or a name already known. */
export type AuditTarget = TargetRef | { label: string; customerId?: number | null };

/** Ids and labels are caller-controlled text: bounded, so a hostile id cannot bloat the log. */
export const MAX_TARGET_CHARS = 200;

// eslint-disable-next-line no-control-regex -- control characters are what it replaces
const UNSTORABLE = /[\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A label as the log can store and show it: no NUL (PostgreSQL text refuses it, failing the batch),
 * no control characters or lone surrogates, at most MAX_TARGET_CHARS. */
export function bounded(text: string): string {
  const clean = text.replace(UNSTORABLE, '\ufffd');
  return clean.length > MAX_TARGET_CHARS ? `${clean.slice(0, MAX_TARGET_CHARS - 1)}…` : clean;
}

/** Objects named without a lookup, by route (after the /api/v1 prefix). */
const FIXED_LABELS: Record<string, string> = {
  '/settings': 'system settings',
  '/installer/upload': 'installer package',
};

/** Routes that create an object without being the kind's own collection path. */
const CREATING: Record<string, TargetKind> = { '/firmware/upload': 'firmware' };

export interface RouteFacts {
  /** The route's pattern, e.g. /api/v1/agents/:id/customer. */
  url: string;
  method: string;
  params: unknown;
  statusCode: number;
  /** The response body as sent, when it is text (a created object's id is read from it). */
  payload: unknown;
}

/** The object of a request, or null when it names none (a list-wide action, an unknown route). */
export function targetOf(route: RouteFacts, prefix: string): AuditTarget | null {
  if (!route.url.startsWith(prefix)) return null;
  const path = route.url.slice(prefix.length);
  const fixed = FIXED_LABELS[path];
  if (fixed) return { label: fixed };
  if (path === '/alerts/acknowledge') return manyAlerts(route);
  const [, segment = '', second] = path.split('/');
  const kind = (KIND_BY_SEGMENT as Record<string, TargetKind | undefined>)[segment];
  if (!kind) return null;
  const params = (route.params ?? {}) as Record<string, unknown>;
  if (second === ':id' && params.id !== undefined) return { kind, id: String(params.id) };
  if ((second === undefined || CREATING[path] === kind) && route.method === 'POST') {
    const id = createdId(route);
    return id === null ? null : { kind, id };
  }
  return null;
}

/** POST /alerts/acknowledge: the alerts it acknowledged, read from its answer (`acknowledged: [ids]`). */
function manyAlerts({ statusCode, payload }: RouteFacts): AuditTarget | null {
  if (statusCode !== 200 || typeof payload !== 'string' || payload.length > 65_536) return null;
  try {
    const ids = (JSON.parse(payload) as { acknowledged?: unknown }).acknowledged;
    return Array.isArray(ids) && ids.length > 0 ? { label: bounded(`alerts ${ids.map(String).join(', ')}`) } : null;
  } catch {
    return null;
  }
}

/** The `id` of the object a POST created, read from its answer (nothing else of it is kept). */
function createdId({ statusCode, payload }: RouteFacts): string | null {
  if (statusCode < 200 || statusCode >= 300 || typeof payload !== 'string' || payload.length > 65_536) return null;
  try {
    const body: unknown = JSON.parse(payload);
    const id = typeof body === 'object' && body !== null ? (body as { id?: unknown }).id : undefined;
    return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
  } catch {
    return null;
  }
}
