// The notification channels as cards: type, owner, whether deliveries work (last delivered, the last
// error, failing since when, notifications still waiting), "Send test" with the receiver's answer, edit
// and delete after asking. Refreshed every 30 s so a recovering receiver shows up without a reload.
import { useState } from 'react';
import { api } from '../api/client';
import { useActionError } from '../ui/use-action-error';
import { useSubmit } from '../ui/use-submit';
import { Badge, ConfirmButton, Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { CHANNEL_LABELS, type Channel, type DeliveryOutcome } from './alert-types';
import { ChannelForm } from './channel-form';
import type { Directory } from './use-directory';
import { Allowed } from '../auth/access';

const REFRESH_MS = 30_000;

export function ChannelsTab({ directory }: { directory: Directory }) {
  const channels = useResource((signal) => api<Channel[]>('/notification-channels', { signal }), [], { refreshMs: REFRESH_MS });
  const [editing, setEditing] = useState<Channel | null>();
  const { error, guard } = useActionError();
  const remove = (channel: Channel) =>
    guard(async () => {
      await api(`/notification-channels/${channel.id}`, { method: 'DELETE' });
      if (editing?.id === channel.id) setEditing(undefined);
      channels.reload();
    });

  return (
    <section aria-label="Notification channels">
      <div className="row">
        <Allowed need="write">
          <button type="button" className="primary" onClick={() => setEditing(null)} disabled={editing === null}>
            New channel
          </button>
        </Allowed>
        <span className="muted">Email, webhook, ntfy, Teams, Slack, Discord or Telegram; global, or one customer’s.</span>
      </div>
      {editing !== undefined && (
        <ChannelForm
          key={editing?.id ?? 'new'}
          channel={editing}
          directory={directory}
          onCancel={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            channels.reload();
          }}
        />
      )}
      <ErrorBanner error={channels.error} />
      <ErrorBanner error={error} />
      {!channels.data ? (
        !channels.error && <Loading />
      ) : channels.data.length === 0 ? (
        <Empty>No channels yet: alerts are listed here but reach nobody.</Empty>
      ) : (
        <div className="channel-cards">
          {channels.data.map((c) => (
            <article key={c.id} className="card channel-card" data-testid="channel-card" aria-label={`Channel ${c.name}`}>
              <header className="alert-card-head">
                <strong>{c.name}</strong>
                <span className="muted">{CHANNEL_LABELS[c.type] ?? c.type}</span>
                {!c.enabled && <Badge tone="muted">off</Badge>}
                {c.status.failing_since ? <Badge tone="bad">failing</Badge> : c.status.last_delivered_at ? <Badge tone="good">delivering</Badge> : null}
              </header>
              <ChannelTarget channel={c} />
              <dl className="alert-facts">
                <div>
                  <dt>Owner</dt>
                  <dd>{c.customer_id === null ? 'global' : (directory.customerById.get(c.customer_id)?.name ?? `customer ${c.customer_id}`)}</dd>
                </div>
                <div>
                  <dt>Last delivered</dt>
                  <dd data-testid="channel-last-delivered">
                    <RelativeTime iso={c.status.last_delivered_at} />
                  </dd>
                </div>
                <div>
                  <dt>Pending</dt>
                  <dd data-testid="channel-pending">{c.status.pending}</dd>
                </div>
                {c.status.failing_since && (
                  <div>
                    <dt>Failing since</dt>
                    <dd>
                      <RelativeTime iso={c.status.failing_since} />
                    </dd>
                  </div>
                )}
              </dl>
              {c.status.last_error && (
                <p className="alert-delivery-error" data-testid="channel-last-error">
                  Last error: {c.status.last_error}
                </p>
              )}
              <Allowed need="write">
                <div className="row-actions">
                  <SendTest channel={c} onDone={channels.reload} />
                  <button type="button" onClick={() => setEditing(c)}>
                    Edit
                  </button>
                  <ConfirmButton label="Delete" question={`Delete channel ${c.name}?`} busyLabel="Deleting…" onConfirm={() => remove(c)} />
                </div>
              </Allowed>
            </article>
          ))}
        </div>
      )}
    </section>
  );
}

/** Where it delivers, from the non-secret settings (secret URLs are only hints). */
function ChannelTarget({ channel }: { channel: Channel }) {
  const s = channel.settings;
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  let target = '';
  if (channel.type === 'email') target = `${Array.isArray(s.to) ? s.to.join(', ') : ''} via ${text(s.host)}:${text(s.port) || '587'}`;
  else if (channel.type === 'webhook') target = text(s.url);
  else if (channel.type === 'ntfy') target = `${text(s.server_url) || 'https://ntfy.sh'}/${text(s.topic)}`;
  else if (channel.type === 'telegram') target = `chat ${text(s.chat_id)}`;
  else target = Object.values(channel.secrets)[0] ? `webhook ${Object.values(channel.secrets)[0]}` : '';
  return target ? <p className="channel-target mono">{target}</p> : null;
}

function SendTest({ channel, onDone }: { channel: Channel; onDone: () => void }) {
  const [outcome, setOutcome] = useState<DeliveryOutcome>();
  const { busy, error, submit } = useSubmit(async () => {
    setOutcome(undefined);
    setOutcome(await api<DeliveryOutcome>(`/notification-channels/${channel.id}/test`, { method: 'POST', body: {} }));
    onDone();
  });
  return (
    <>
      <button type="button" disabled={busy} onClick={() => void submit()}>
        {busy ? 'Sending…' : 'Send test'}
      </button>
      {(outcome || error) && (
        <div className="test-outcome" role="status" data-testid="test-outcome">
          {outcome &&
            (outcome.delivered ? (
              <Badge tone="good">delivered</Badge>
            ) : (
              <Badge tone="bad">not delivered</Badge>
            ))}
          {outcome?.status_code !== null && outcome?.status_code !== undefined && <span> status {outcome.status_code}</span>}
          {outcome?.error && <span className="invalid-text"> {outcome.error}</span>}
          {outcome?.answer && <pre className="test-answer">{outcome.answer}</pre>}
          <ErrorBanner error={error} />
        </div>
      )}
    </>
  );
}
