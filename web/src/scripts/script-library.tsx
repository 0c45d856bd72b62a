// The script library: every saved script (the API sends all, by name) with its shell, platforms and
// parameters; create, edit (also reached as /scripts?edit={id}, the history's link) and delete after
// asking. Deleting keeps the history, which names each run's script.
import { api } from '../api/client';
import { PLATFORM_LABELS } from '../api/types';
import { setQuery, useQuery } from '../router';
import { useActionError } from '../ui/use-action-error';
import { ActionsHeader, ConfirmButton, Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { ScriptForm } from './script-form';
import { SHELL_LABELS, type Script } from './script-types';
import { allows, useAccess } from '../auth/access';
import { TableFrame } from '../ui/table-frame';

export function ScriptLibrary() {
  const scripts = useResource((signal) => api<Script[]>('/scripts', { signal }), []);
  // The library is shared by every customer: changing it is refused to read users and to users
  // limited to customers, who see it to know what runs.
  const mayEdit = allows(useAccess(), 'server-wide');
  const asked = useQuery().get('edit');
  const editing = mayEdit ? asked : null;
  const { error, guard } = useActionError();
  const list = scripts.data ?? [];
  const edited = editing && editing !== 'new' ? list.find((s) => String(s.id) === editing) : undefined;
  const close = (saved: Script | undefined) => {
    setQuery({ edit: undefined });
    if (saved) scripts.reload();
  };
  const remove = (script: Script) =>
    guard(async () => {
      try {
        await api(`/scripts/${script.id}`, { method: 'DELETE' });
      } finally {
        scripts.reload();
      }
    });

  return (
    <div className="script-library">
      <div className="row">
        {mayEdit && (
          <button type="button" className="primary" onClick={() => setQuery({ edit: 'new' })} disabled={editing === 'new'}>
            New script
          </button>
        )}
        <span className="muted">Scripts run on one agent from its Actions tab, or on many as a bulk action.</span>
      </div>
      {editing === 'new' && <ScriptForm key="new" onDone={close} />}
      {edited && <ScriptForm key={edited.id} script={edited} onDone={close} />}
      {editing && editing !== 'new' && scripts.data && !edited && <ErrorBanner error={new Error(`There is no script ${editing} (any more).`)} />}
      <ErrorBanner error={scripts.error ?? error} />
      {!scripts.data ? (
        !scripts.error && <Loading />
      ) : list.length === 0 ? (
        <Empty>{mayEdit ? 'No scripts yet. Save one with "New script".' : 'No scripts yet.'}</Empty>
      ) : (
        <TableFrame label="Scripts">
          <table data-testid="scripts-table" className="stack">
            <thead>
              <tr>
                <th>Name</th>
                <th>Shell</th>
                <th>Runs on</th>
                <th>Parameters</th>
                <th>Changed</th>
                {mayEdit && <ActionsHeader />}
              </tr>
            </thead>
            <tbody>
              {list.map((s) => (
                <tr key={s.id} data-testid="script-row">
                  <td className="script-name">
                    <strong>{s.name}</strong>
                    {s.description && <div className="muted">{s.description}</div>}
                  </td>
                  <td data-label="Shell">{SHELL_LABELS[s.shell] ?? s.shell}</td>
                  <td data-label="Runs on">{s.platforms.map((p) => PLATFORM_LABELS[p] ?? p).join(', ')}</td>
                  <td data-label="Parameters">
                    {s.parameters.length === 0 ? (
                      <span className="muted">none</span>
                    ) : (
                      s.parameters.map((p) => (
                        <div key={p.name} title={p.description || undefined}>
                          <span className="mono">{p.name}</span>
                          {p.default && <span className="muted"> = {p.default}</span>}
                        </div>
                      ))
                    )}
                  </td>
                  <td data-label="Changed">
                    <RelativeTime iso={s.updated_at} />
                  </td>
                  {mayEdit && (
                    <td className="script-actions">
                      <button type="button" onClick={() => setQuery({ edit: String(s.id) })}>
                        Edit
                      </button>
                      <ConfirmButton label="Delete" question={`Delete script "${s.name}"? Its runs stay in the history.`} busyLabel="Deleting…" onConfirm={() => remove(s)} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
    </div>
  );
}
