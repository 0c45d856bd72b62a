// The alert rules: what each watches, where, whom it notifies, whether it is on; a form to create one
// and the same form to edit one, and delete after asking (the server resolves its open alerts first).
import { useState } from 'react';
import { api } from '../api/client';
import { useActionError } from '../ui/use-action-error';
import { ActionsHeader, Badge, ConfirmButton, Empty, ErrorBanner, Loading } from '../ui/widgets';
import { useResource } from '../use-resource';
import { refreshAlertSummary } from './alert-summary';
import { KIND_LABELS, type AlertRule, type Channel } from './alert-types';
import { RuleForm } from './rule-form';
import { describeParams } from './rule-params';
import { scopeText } from './scope-picker';
import type { Directory } from './use-directory';
import { Allowed } from '../auth/access';
import { TableFrame } from '../ui/table-frame';

export function RulesTab({ directory }: { directory: Directory }) {
  const rules = useResource((signal) => api<AlertRule[]>('/alert-rules', { signal }), []);
  const channels = useResource((signal) => api<Channel[]>('/notification-channels', { signal }), []);
  // null: the "New rule" form; a rule: editing it; undefined: no form open.
  const [editing, setEditing] = useState<AlertRule | null>();
  const { error, guard } = useActionError();
  const channelName = new Map((channels.data ?? []).map((c) => [c.id, c.name]));
  const remove = (rule: AlertRule) =>
    guard(async () => {
      await api(`/alert-rules/${rule.id}`, { method: 'DELETE' });
      if (editing?.id === rule.id) setEditing(undefined);
      rules.reload();
      refreshAlertSummary();
    });

  return (
    <section aria-label="Alert rules">
      <div className="row">
        <Allowed need="write">
          <button type="button" className="primary" onClick={() => setEditing(null)} disabled={editing === null}>
            New rule
          </button>
        </Allowed>
        <span className="muted">A rule fires once per agent (and label) while its condition holds, and resolves when it clears.</span>
      </div>
      {editing !== undefined && (
        <RuleForm
          key={editing?.id ?? 'new'}
          rule={editing}
          channels={channels.data ?? []}
          directory={directory}
          onCancel={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            rules.reload();
          }}
        />
      )}
      <ErrorBanner error={rules.error ?? channels.error} />
      <ErrorBanner error={error} />
      {!rules.data ? (
        !rules.error && <Loading />
      ) : rules.data.length === 0 ? (
        <Empty>No rules yet.</Empty>
      ) : (
        <TableFrame label="Alert rules">
          <table className="stack-table alerting-table" data-testid="rules-table">
            <thead>
              <tr>
                <th>Rule</th>
                <th>Kind</th>
                <th>Applies to</th>
                <th>Channels</th>
                <th>Enabled</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {rules.data.map((r) => (
                <tr key={r.id} data-testid="rule-row">
                  <td>
                    <strong>{r.name}</strong>
                    {r.reminder_minutes ? <div className="muted">reminder every {r.reminder_minutes} min</div> : null}
                  </td>
                  <td data-label="Kind">
                    {KIND_LABELS[r.kind] ?? r.kind}
                    <div className="muted">{describeParams(r.kind, r.params)}</div>
                  </td>
                  <td data-label="Applies to">{scopeText(r, directory)}</td>
                  <td data-label="Channels">{r.channel_ids.length === 0 ? <span className="muted">none</span> : r.channel_ids.map((id) => channelName.get(id) ?? `#${id}`).join(', ')}</td>
                  <td data-label="Enabled">{r.enabled ? <Badge tone="good">on</Badge> : <Badge tone="muted">off</Badge>}</td>
                  <td>
                    <Allowed need="write">
                      <div className="row-actions">
                        <button type="button" onClick={() => setEditing(r)}>
                          Edit
                        </button>
                        <ConfirmButton label="Delete" question={`Delete rule ${r.name}? Its open alerts are resolved.`} busyLabel="Deleting…" onConfirm={() => remove(r)} />
                      </div>
                    </Allowed>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
    </section>
  );
}
