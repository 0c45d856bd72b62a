// Maintenance windows: where each applies, when (once or on a cron schedule), whether it is active now
// and when it next starts; create, edit, delete after asking. Refreshed every 30 s so "active now"
// follows the clock.
import { useState } from 'react';
import { api } from '../api/client';
import { formatDateTime } from '../ui/format';
import { useActionError } from '../ui/use-action-error';
import { ActionsHeader, Badge, ConfirmButton, Empty, ErrorBanner, Loading } from '../ui/widgets';
import { useResource } from '../use-resource';
import type { MaintenanceWindow } from './alert-types';
import { MaintenanceForm } from './maintenance-form';
import { scopeText } from './scope-picker';
import type { Directory } from './use-directory';
import { Allowed } from '../auth/access';
import { TableFrame } from '../ui/table-frame';

const REFRESH_MS = 30_000;
const UTC: Intl.DateTimeFormatOptions = { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC' };
const utc = (iso: string | null) => (iso ? `${new Intl.DateTimeFormat(undefined, UTC).format(new Date(iso))} UTC` : '–');

export function MaintenanceTab({ directory }: { directory: Directory }) {
  const windows = useResource((signal) => api<MaintenanceWindow[]>('/maintenance-windows', { signal }), [], { refreshMs: REFRESH_MS });
  const [editing, setEditing] = useState<MaintenanceWindow | null>();
  const { error, guard } = useActionError();
  const remove = (w: MaintenanceWindow) =>
    guard(async () => {
      await api(`/maintenance-windows/${w.id}`, { method: 'DELETE' });
      if (editing?.id === w.id) setEditing(undefined);
      windows.reload();
    });

  return (
    <section aria-label="Maintenance windows">
      <div className="row">
        <Allowed need="write">
          <button type="button" className="primary" onClick={() => setEditing(null)} disabled={editing === null}>
            New maintenance window
          </button>
        </Allowed>
        <span className="muted">Planned work: alerts beginning inside a window notify nobody.</span>
      </div>
      {editing !== undefined && (
        <MaintenanceForm
          key={editing?.id ?? 'new'}
          window={editing}
          directory={directory}
          onCancel={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined);
            windows.reload();
          }}
        />
      )}
      <ErrorBanner error={windows.error} />
      <ErrorBanner error={error} />
      {!windows.data ? (
        !windows.error && <Loading />
      ) : windows.data.length === 0 ? (
        <Empty>No maintenance windows.</Empty>
      ) : (
        <TableFrame label="Maintenance windows">
          <table className="stack-table alerting-table" data-testid="maintenance-table">
            <thead>
              <tr>
                <th>Window</th>
                <th>Applies to</th>
                <th>When</th>
                <th>Now</th>
                <th>Next start</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {windows.data.map((w) => (
                <tr key={w.id} data-testid="maintenance-row">
                  <td>
                    <strong>{w.name}</strong>
                  </td>
                  <td data-label="Applies to">{scopeText(w, directory)}</td>
                  <td data-label="When">
                    {w.cron ? (
                      <>
                        <code>{w.cron}</code> <span className="muted">UTC, for {w.duration_minutes} min</span>
                      </>
                    ) : (
                      <span className="nowrap-lines">
                        <span>{utc(w.starts_at)}</span> <span>– {utc(w.ends_at)}</span>
                      </span>
                    )}
                  </td>
                  <td data-label="Now">{w.active_now ? <Badge tone="warn">active</Badge> : <span className="muted">inactive</span>}</td>
                  <td data-label="Next start">{w.next_start ? <time dateTime={w.next_start} title={utc(w.next_start)}>{formatDateTime(w.next_start)}</time> : <span className="muted">none</span>}</td>
                  <td>
                    <Allowed need="write">
                      <div className="row-actions">
                        <button type="button" onClick={() => setEditing(w)}>
                          Edit
                        </button>
                        <ConfirmButton label="Delete" question={`Delete window ${w.name}?`} busyLabel="Deleting…" onConfirm={() => remove(w)} />
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
