// An audit entry's object and details as people read them: the object by name ("agent demo-3
// (Bäckerei …)", from the server's `target`), and the details as "key: value" lines instead of JSON.
// Entries written before the server named objects have no target: the request line stands in.
import type { ApiItem } from '../api/api-types';

/** One entry of GET /audit. */
type AuditEntry = ApiItem<'/audit'>;

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'created',
  202: 'accepted',
  204: 'done',
  400: 'invalid input',
  401: 'not signed in',
  403: 'forbidden',
  404: 'not found',
  409: 'conflict',
  413: 'too large',
  429: 'rate limited',
  502: 'agent error',
  504: 'agent did not answer',
};

export function AuditTarget({ entry }: { entry: AuditEntry }) {
  if (entry.target) return <span className="audit-target">{entry.target}</span>;
  return <span className="mono audit-path">{`${entry.method} ${entry.path.split(';')[0]}`}</span>;
}

/** The details worth a line each: outcome, address, the request line, and the terminal's extras. */
export function detailsOf(entry: AuditEntry): Array<[string, string]> {
  const [path = '', ...extras] = entry.path.split(';');
  const status = STATUS_TEXT[entry.status_code];
  const lines: Array<[string, string]> = [
    ['result', status ? `${entry.status_code} ${status}` : String(entry.status_code)],
    ['from', entry.ip || 'unknown address'],
  ];
  if (entry.target) lines.push(['request', `${entry.method} ${path}`]);
  // Terminal and device sessions append `;session=…;duration_s=12;reason=closed;…` to their path.
  for (const extra of extras) {
    const [key = '', value = ''] = extra.split('=');
    if (key) lines.push([key === 'duration_s' ? 'duration' : key, key === 'duration_s' ? `${value} s` : value]);
  }
  return lines;
}

/** Details that are addresses and identifiers (a device session's id, a transfer's SHA-256): monospaced, broken anywhere. */
const MONO_DETAILS = new Set(['request', 'from', 'session', 'sha256']);

export function AuditDetails({ entry }: { entry: AuditEntry }) {
  return (
    <dl className={entry.status_code >= 400 ? 'audit-details audit-failed' : 'audit-details'} data-testid="audit-details">
      {detailsOf(entry).map(([key, value]) => (
        <div key={key}>
          <dt>{key}:</dt> <dd className={MONO_DETAILS.has(key) ? 'mono' : undefined}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
