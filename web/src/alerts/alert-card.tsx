// One alert as a card: its state, what crossed which threshold on which agent of which customer, since
// when, who acknowledged or resolved it with what comment, whether it was suppressed by a maintenance
// window or could not be delivered, and the actions its state allows. A card reads well on a phone and
// at a desk, where open alerts are few and each deserves its full text.
import { Fragment } from 'react';
import type { Customer } from '../api/types';
import { Link } from '../router';
import { formatDateTime } from '../ui/format';
import { Badge, RelativeTime } from '../ui/widgets';
import { AlertActions } from './alert-actions';
import { KIND_LABELS, type Alert, type AlertState } from './alert-types';

const STATE_TONES: Record<AlertState, 'bad' | 'warn' | 'good'> = { firing: 'bad', acknowledged: 'warn', resolved: 'good' };

export function AlertStateBadge({ state }: { state: AlertState }) {
  return (
    <span data-testid="alert-state">
      <Badge tone={STATE_TONES[state] ?? 'muted'}>{state}</Badge>
    </span>
  );
}

export function SuppressedBadge() {
  return (
    <span title="Began inside a maintenance window: recorded, nobody was notified" data-testid="alert-suppressed">
      <Badge tone="muted">suppressed</Badge>
    </span>
  );
}

export function customerName(customers: ReadonlyMap<number, Customer>, id: number | null): string {
  if (id === null) return 'no customer';
  const c = customers.get(id);
  return c ? `${c.number} ${c.name}` : `customer ${id}`;
}

/** A host name that may wrap only after its dots, hyphens and underscores, never inside a word. */
function breakable(name: string) {
  return name.split(/(?<=[.\-_])/).map((part, i) => (
    <Fragment key={i}>
      {i > 0 && <wbr />}
      {part}
    </Fragment>
  ));
}

export function AgentLink({ alert }: { alert: Alert }) {
  const name = alert.agent_name ?? alert.agent_id.slice(0, 12);
  return (
    <>
      <Link to={`/agents/${encodeURIComponent(alert.agent_id)}`}>{breakable(name)}</Link>
      {alert.hostname && alert.hostname !== name && <span className="muted agent-host">{breakable(alert.hostname)}</span>}
    </>
  );
}

export function AlertCard({ alert, customers, onChanged }: { alert: Alert; customers: ReadonlyMap<number, Customer>; onChanged: () => void }) {
  return (
    <article className={`card alert-card alert-${alert.state}`} data-testid="alert-card" data-alert-id={alert.id} aria-label={`${alert.rule_name}: ${alert.summary}`}>
      <header className="alert-card-head">
        <AlertStateBadge state={alert.state} />
        {alert.suppressed && <SuppressedBadge />}
        <strong className="alert-rule">{alert.rule_name}</strong>
        {alert.label && <code className="alert-label">{alert.label}</code>}
        <span className="muted alert-kind">{KIND_LABELS[alert.kind] ?? alert.kind}</span>
      </header>
      <p className="alert-summary">{alert.summary}</p>
      <dl className="alert-facts">
        <div>
          <dt>Customer</dt>
          <dd>{customerName(customers, alert.customer_id)}</dd>
        </div>
        <div className="alert-agent-fact">
          <dt>Agent</dt>
          <dd>
            <AgentLink alert={alert} />
          </dd>
        </div>
        <div>
          <dt>Since</dt>
          <dd>
            <RelativeTime iso={alert.since} />
          </dd>
        </div>
        <div>
          <dt>Fired</dt>
          <dd>
            <RelativeTime iso={alert.fired_at} />
          </dd>
        </div>
      </dl>
      <AlertTrail alert={alert} />
      {alert.delivery_error && (
        <p className="alert-delivery-error" data-testid="alert-delivery-error">
          Notification not delivered: {alert.delivery_error}
        </p>
      )}
      <AlertActions alert={alert} onChanged={onChanged} />
    </article>
  );
}

/** Who acknowledged and who resolved, when, and what they wrote. */
export function AlertTrail({ alert }: { alert: Alert }) {
  if (!alert.acknowledged_at && !alert.resolved_at) return null;
  return (
    <ul className="alert-trail" data-testid="alert-trail">
      {alert.acknowledged_at && (
        <li>
          Acknowledged by {alert.acknowledged_by ?? 'someone'} <time dateTime={alert.acknowledged_at}>{formatDateTime(alert.acknowledged_at)}</time>
          {alert.ack_comment && <q className="alert-comment-text">{alert.ack_comment}</q>}
        </li>
      )}
      {alert.resolved_at && (
        <li>
          Resolved {alert.resolved_by ? `by ${alert.resolved_by}` : 'automatically'} <time dateTime={alert.resolved_at}>{formatDateTime(alert.resolved_at)}</time>
          {alert.resolve_comment && <q className="alert-comment-text">{alert.resolve_comment}</q>}
        </li>
      )}
    </ul>
  );
}
