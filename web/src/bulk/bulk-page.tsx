// One bulk action (/bulk/{id}): what it does, to whom, by whom and until when it waits; its counts and
// a result per agent, polled every 2 s until no result waits or runs. "Download CSV" saves the results;
// "Cancel waiting" ends the results still waiting for their agent (running ones finish).
import { useEffect, useMemo, useState } from 'react';
import { api } from '../api/client';
import type { Customer } from '../api/types';
import { downloadWithToken } from '../firmware/transfer';
import { Link } from '../router';
import type { Script } from '../scripts/script-types';
import { formatDateTime } from '../ui/format';
import { usePageTitle } from '../ui/page-title';
import { useActionError } from '../ui/use-action-error';
import { ConfirmButton, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { CountsLine, describeAction, TargetText } from './bulk-describe';
import { BulkResults } from './bulk-results';
import type { BulkActionWithResults } from './bulk-types';
import './bulk.css';
import { Allowed } from '../auth/access';

const POLL_MS = 2_000;

export function BulkPage({ id }: { id: string }) {
  // The route gives any text; the API only knows positive integers.
  const actionId = /^[1-9]\d{0,14}$/.test(id) ? Number(id) : undefined;
  const [live, setLive] = useState(true);
  const bulk = useResource(
    (signal) => (actionId === undefined ? Promise.reject(new Error(`There is no bulk action "${id}".`)) : api<BulkActionWithResults>(`/bulk-actions/${actionId}`, { signal })),
    [actionId, id],
    { refreshMs: live ? POLL_MS : undefined },
  );
  const b = bulk.data;
  useEffect(() => setLive(!b?.finished), [b?.finished]);
  usePageTitle(b ? `Bulk action ${b.id}` : 'Bulk action', 'Scripts');

  if (!b) {
    return (
      <section>
        <p className="crumbs">
          <Link to="/scripts/bulk">Bulk actions</Link>
        </p>
        {bulk.error ? <ErrorBanner error={bulk.error} /> : <Loading />}
      </section>
    );
  }
  return (
    <section className="bulk-page">
      <p className="crumbs">
        <Link to="/scripts/bulk">Bulk actions</Link> / {b.id}
      </p>
      <BulkHeader action={b} />
      <ErrorBanner error={bulk.error} />
      <BulkControls action={b} onChanged={bulk.reload} />
      <h2>
        Results{' '}
        <span className="muted" data-testid="bulk-progress">
          {b.finished ? '(finished)' : '(refreshed every 2 s)'}
        </span>
      </h2>
      <p data-testid="bulk-counts">
        <CountsLine counts={b.counts} />
      </p>
      <BulkResults results={b.results} />
    </section>
  );
}

function BulkHeader({ action: b }: { action: BulkActionWithResults }) {
  // Names instead of numbers: the script (its id is what was stored) and the customer of a filter.
  const scripts = useResource((signal) => (b.action === 'script' ? api<Script[]>('/scripts', { signal }) : Promise.resolve([])), [b.action]);
  const customers = useResource((signal) => (typeof b.target.customer_id === 'number' ? api<Customer[]>('/customers', { signal }) : Promise.resolve([])), [b.target.customer_id]);
  const scriptNames = useMemo(() => new Map((scripts.data ?? []).map((s) => [s.id, s.name])), [scripts.data]);
  const customerNames = useMemo(() => new Map((customers.data ?? []).map((c) => [c.id, c.name])), [customers.data]);
  return (
    <>
      <h1 className="bulk-title" data-testid="bulk-title">
        {describeAction(b, scriptNames)}
      </h1>
      <div className="card">
        <dl className="facts">
          <div className="fact">
            <dt>On</dt>
            <dd>
              <TargetText target={b.target} customers={customerNames} /> ({b.results.length} {b.results.length === 1 ? 'agent' : 'agents'})
            </dd>
          </div>
          <div className="fact">
            <dt>By</dt>
            <dd>
              {b.actor}
              {b.task_id !== null && (
                <>
                  {' '}
                  (<Link to={`/tasks/${b.task_id}`}>task {b.task_id}</Link>)
                </>
              )}
            </dd>
          </div>
          <div className="fact">
            <dt>Started</dt>
            <dd>
              {formatDateTime(b.created_at)} (<RelativeTime iso={b.created_at} />)
            </dd>
          </div>
          <div className="fact">
            <dt>Waits until</dt>
            <dd>
              {formatDateTime(b.expires_at)} (<RelativeTime iso={b.expires_at} />)
            </dd>
          </div>
        </dl>
      </div>
    </>
  );
}

function BulkControls({ action: b, onChanged }: { action: BulkActionWithResults; onChanged: () => void }) {
  const { error, guard } = useActionError();
  const download = () => guard(() => downloadWithToken(`/bulk-actions/${b.id}/results.csv`, undefined, `bulk-${b.id}-${b.action}.csv`));
  const cancel = () =>
    guard(async () => {
      try {
        await api(`/bulk-actions/${b.id}`, { method: 'DELETE' });
      } finally {
        onChanged();
      }
    });
  return (
    <>
      <div className="row bulk-controls">
        <button type="button" onClick={() => void download()}>
          Download CSV
        </button>
        {b.counts.waiting > 0 && (
          <Allowed need="write">
            <ConfirmButton
              label="Cancel waiting"
              question={`Cancel the ${b.counts.waiting} ${b.counts.waiting === 1 ? 'result' : 'results'} still waiting for their agent?`}
              busyLabel="Cancelling…"
              onConfirm={cancel}
            />
          </Allowed>
        )}
      </div>
      <ErrorBanner error={error} />
    </>
  );
}
