// Words for a bulk action: its result statuses as badges, its parameters and its target in a line.
import { Link } from '../router';
import { str } from '../ui/safe-data';
import { ACTION_LABELS, RESULT_LABELS, type BulkAction, type ResultStatus } from './bulk-types';
import './bulk.css';

const TONES: Record<ResultStatus, string> = {
  done: 'badge-good',
  failed: 'badge-bad',
  running: 'badge-running',
  waiting: 'badge-warn',
  not_connected: 'badge-muted',
  cancelled: 'badge-muted',
};

export function ResultBadge({ status }: { status: ResultStatus }) {
  return (
    <span className={`badge ${TONES[status] ?? 'badge-muted'}`} data-testid="result-status" data-status={status}>
      {RESULT_LABELS[status] ?? status}
    </span>
  );
}

/** "3 done · 1 waiting for agent": only the statuses that occur, in a fixed order. */
export function CountsLine({ counts }: { counts: BulkAction['counts'] }) {
  const order: ResultStatus[] = ['done', 'failed', 'running', 'waiting', 'not_connected', 'cancelled'];
  const shown = order.filter((s) => (counts[s] ?? 0) > 0);
  if (shown.length === 0) return <span className="muted">no agents</span>;
  return (
    <span className="counts-line">
      {shown.map((s) => (
        <span key={s} className="count" data-testid={`count-${s}`}>
          <strong>{counts[s]}</strong> {RESULT_LABELS[s]}
        </span>
      ))}
    </span>
  );
}

/** The action with what it was given: "Run a command: uptime", "Reboot in 60 s". */
export function describeAction(action: BulkAction, scriptNames: ReadonlyMap<number, string> = new Map()): string {
  const p = action.params;
  const label = ACTION_LABELS[action.action] ?? action.action;
  switch (action.action) {
    case 'exec':
      return `${label}: ${str(p.command).split('\n')[0] ?? ''}`;
    case 'script': {
      const id = typeof p.script_id === 'number' ? p.script_id : undefined;
      const values = Object.entries(typeof p.parameters === 'object' && p.parameters !== null ? (p.parameters as Record<string, unknown>) : {});
      const name = id === undefined ? '?' : (scriptNames.get(id) ?? `#${id}`);
      return `${label}: ${name}${values.length ? ` (${values.map(([k, v]) => `${k}=${str(v)}`).join(', ')})` : ''}`;
    }
    case 'update':
      return `${label}${p.security_only === true ? ', security only' : ''}${p.reboot === true ? ', reboot when needed' : ''}`;
    case 'reboot':
      return typeof p.delay === 'number' && p.delay > 0 ? `${label} in ${p.delay} s` : label;
    default:
      return label;
  }
}

/** Whom it was aimed at, as made: listed agents or a filter. */
export function TargetText({ target, customers = new Map() }: { target: Record<string, unknown>; customers?: ReadonlyMap<number, string> }) {
  if (Array.isArray(target.agent_ids)) return <>{target.agent_ids.length === 1 ? '1 chosen agent' : `${target.agent_ids.length} chosen agents`}</>;
  const parts: string[] = [];
  if (typeof target.platform === 'string') parts.push(`platform ${target.platform}`);
  if (typeof target.status === 'string') parts.push(`status ${target.status}`);
  if (typeof target.q === 'string') parts.push(`matching "${target.q}"`);
  const customer = typeof target.customer_id === 'number' ? target.customer_id : undefined;
  return (
    <>
      {customer !== undefined ? (
        <>
          all agents of <Link to={`/customers/${customer}`}>{customers.get(customer) ?? `customer ${customer}`}</Link>
        </>
      ) : (
        'all agents'
      )}
      {parts.length > 0 && `, ${parts.join(', ')}`}
    </>
  );
}
