// Users: everyone listed here administers the whole console (there are no roles). The list, with a
// password change inline in a user's row and delete, and a form that creates a user.
import { useState } from 'react';
import { api } from '../api/client';
import { endSession, useSessionState } from '../api/session';
import { useActionError } from '../ui/use-action-error';
import { Badge, ConfirmButton, Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { ChangePasswordForm, CreateUserForm, type User } from './user-forms';

interface Notice {
  tone: 'info' | 'warn';
  text: string;
}

const byName = (a: User, b: User) => a.username.localeCompare(b.username);

export function UsersPage() {
  const users = useResource((signal) => api<User[]>('/users', { signal }), []);
  const signedInAs = useSessionState().session?.username ?? '';
  const [editingId, setEditingId] = useState<number | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const { error, guard } = useActionError();
  // Usernames are unique regardless of case on the server.
  const isSelf = (user: User) => user.username.toLowerCase() === signedInAs.toLowerCase();

  const remove = (user: User) =>
    guard(async () => {
      setNotice(null);
      await api(`/users/${user.id}`, { method: 'DELETE' });
      setNotice({ tone: 'info', text: `User ${user.username} deleted.` });
      users.reload();
    });

  // Deleting yourself would end this session mid-page; another user has to do it.
  const refuseSelfDelete = () =>
    setNotice({ tone: 'warn', text: 'You cannot delete the user you are signed in as. Sign in as another user to delete this one.' });

  const passwordSaved = (user: User) => {
    // The server ended all of this user's sessions, this one included when it is ours.
    if (isSelf(user)) {
      endSession('Your password has changed. Please sign in with the new password.');
      return;
    }
    setEditingId(null);
    setNotice({ tone: 'info', text: `Password of ${user.username} changed; their sessions have ended.` });
  };

  return (
    <section>
      <h1>Users {users.data && <span className="muted">({users.data.length})</span>}</h1>
      <p className="muted">Every user has full rights in the console: agents, terminals, customers, API keys and other users.</p>
      <CreateUserForm
        onCreated={(user) => {
          setNotice({ tone: 'info', text: `User ${user.username} created.` });
          users.reload();
        }}
      />
      {notice && (
        <div className={`banner banner-${notice.tone}`} role="status">
          {notice.text}
        </div>
      )}
      <ErrorBanner error={users.error ?? error} />
      {!users.data ? (
        !users.error && <Loading />
      ) : users.data.length === 0 ? (
        <Empty>No users.</Empty>
      ) : (
        <div className="table-wrap">
          <table data-testid="users-table">
            <thead>
              <tr>
                <th>Username</th>
                <th>Two-factor</th>
                <th>Created</th>
                <th>Last sign-in</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {[...users.data].sort(byName).map((user) => (
                <tr key={user.id} data-testid="user-row">
                  <td>
                    {user.username} {isSelf(user) && <Badge tone="muted">you</Badge>}
                  </td>
                  <td>{user.totp_enabled ? <Badge tone="good">on</Badge> : <Badge tone="muted">off</Badge>}</td>
                  <td>
                    <RelativeTime iso={user.created_at} />
                  </td>
                  <td>
                    <RelativeTime iso={user.last_login_at} />
                  </td>
                  <td>
                    {editingId === user.id ? (
                      <ChangePasswordForm user={user} self={isSelf(user)} onSaved={() => passwordSaved(user)} onCancel={() => setEditingId(null)} />
                    ) : (
                      <span className="confirm">
                        <button type="button" onClick={() => setEditingId(user.id)}>
                          Change password
                        </button>
                        {isSelf(user) ? (
                          <button type="button" className="danger-outline" onClick={refuseSelfDelete}>
                            Delete
                          </button>
                        ) : (
                          <ConfirmButton label="Delete" question={`Delete user ${user.username}? They can no longer sign in.`} busyLabel="Deleting…" onConfirm={() => remove(user)} />
                        )}
                      </span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
