// Users (issue 35): each has a role (read < write < admin) and is limited to some customers or has
// them all. This page is an admin's with every customer (app.tsx), as the server's user management is:
// create users, change a user's access or password, end their sessions, delete them.
import { useState } from 'react';
import { api } from '../api/client';
import { endSession, useSessionState } from '../api/session';
import type { Customer } from '../api/types';
import { useActionError } from '../ui/use-action-error';
import { ActionsHeader, Badge, ConfirmButton, Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { ChangeAccessForm, scopeText } from './access-fields';
import { ChangePasswordForm, CreateUserForm, type User } from './user-forms';
import './users.css';
import { TableFrame } from '../ui/table-frame';

interface Notice {
  tone: 'info' | 'warn';
  text: string;
}

type Editing = { id: number; what: 'password' | 'access' } | null;

const byName = (a: User, b: User) => a.username.localeCompare(b.username);

export function UsersPage() {
  const users = useResource((signal) => api<User[]>('/users', { signal }), []);
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const signedInAs = useSessionState().session?.username ?? '';
  const [editing, setEditing] = useState<Editing>(null);
  const [notice, setNotice] = useState<Notice | null>(null);
  const { error, guard } = useActionError();
  // Usernames are unique regardless of case on the server.
  const isSelf = (user: User) => user.username.toLowerCase() === signedInAs.toLowerCase();
  const done = (text: string) => {
    setEditing(null);
    setNotice({ tone: 'info', text });
    users.reload();
  };

  const actions: UserActionHandlers = {
    edit: (user, what) => {
      setNotice(null);
      setEditing({ id: user.id, what });
    },
    remove: (user) =>
      guard(async () => {
        setNotice(null);
        await api(`/users/${user.id}`, { method: 'DELETE' });
        done(`User ${user.username} deleted.`);
      }),
    // Deleting yourself would end this session mid-page; another user has to do it.
    refuseSelfDelete: () => setNotice({ tone: 'warn', text: 'You cannot delete the user you are signed in as. Sign in as another user to delete this one.' }),
    endSessions: (user) =>
      guard(async () => {
        setNotice(null);
        await api(`/users/${user.id}/sessions`, { method: 'DELETE' });
        if (isSelf(user)) endSession('You ended all your sessions. Please sign in again.');
        else done(`All sessions of ${user.username} have ended; they sign in again.`);
      }),
  };

  // The server ended all of this user's sessions, this one included when it is ours.
  const passwordSaved = (user: User) => {
    if (isSelf(user)) endSession('Your password has changed. Please sign in with the new password.');
    else done(`Password of ${user.username} changed; their sessions have ended.`);
  };
  const accessSaved = (user: User) => {
    if (isSelf(user)) endSession('Your access has changed. Please sign in again.');
    else done(`${user.username} is now ${user.role} for ${scopeText(user.customer_ids, customers.data).toLowerCase()}; their sessions have ended.`);
  };

  return (
    <section>
      <h1>Users {users.data && <span className="muted">({users.data.length})</span>}</h1>
      <p className="muted">
        A read user looks only; a write user also changes things and runs commands; an admin also manages users, settings and the server's
        terminal. A user limited to customers sees only theirs.
      </p>
      <CreateUserForm customers={customers.data ?? []} onCreated={(user) => done(`User ${user.username} created.`)} />
      {notice && (
        <div className={`banner banner-${notice.tone}`} role="status">
          {notice.text}
        </div>
      )}
      <ErrorBanner error={users.error ?? customers.error ?? error} />
      {!users.data ? (
        !users.error && <Loading />
      ) : users.data.length === 0 ? (
        <Empty>No users.</Empty>
      ) : (
        <TableFrame label="Users">
          <table data-testid="users-table" className="stack">
            <thead>
              <tr>
                <th>Username</th>
                <th>Role</th>
                <th>Customers</th>
                <th>Two-factor</th>
                <th>Created</th>
                <th>Last sign-in</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {[...users.data].sort(byName).map((user) => (
                <tr key={user.id} data-testid="user-row" data-username={user.username}>
                  <td>
                    {user.username} {isSelf(user) && <Badge tone="muted">you</Badge>}
                  </td>
                  <td data-label="Role" data-testid="user-role">{user.role}</td>
                  <td data-label="Customers" data-testid="user-scope">{scopeText(user.customer_ids, customers.data)}</td>
                  <td data-label="Two-factor">{user.totp_enabled ? <Badge tone="good">on</Badge> : <Badge tone="muted">off</Badge>}</td>
                  <td data-label="Created">
                    <RelativeTime iso={user.created_at} />
                  </td>
                  <td data-label="Last sign-in">
                    <RelativeTime iso={user.last_login_at} />
                  </td>
                  <td>
                    {editing?.id === user.id && editing.what === 'password' ? (
                      <ChangePasswordForm user={user} self={isSelf(user)} onSaved={() => passwordSaved(user)} onCancel={() => setEditing(null)} />
                    ) : editing?.id === user.id && editing.what === 'access' ? (
                      <ChangeAccessForm user={user} self={isSelf(user)} customers={customers.data ?? []} onSaved={accessSaved} onCancel={() => setEditing(null)} />
                    ) : (
                      <UserActions user={user} self={isSelf(user)} handlers={actions} />
                    )}
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

interface UserActionHandlers {
  edit: (user: User, what: 'password' | 'access') => void;
  remove: (user: User) => Promise<void>;
  refuseSelfDelete: () => void;
  endSessions: (user: User) => Promise<void>;
}

function UserActions({ user, self, handlers }: { user: User; self: boolean; handlers: UserActionHandlers }) {
  return (
    <span className="user-actions">
      <button type="button" onClick={() => handlers.edit(user, 'access')}>
        Change access
      </button>
      <button type="button" onClick={() => handlers.edit(user, 'password')}>
        Change password
      </button>
      <ConfirmButton
        label="End sessions"
        question={self ? 'End all your sessions? This signs you out here too.' : `End all sessions of ${user.username}? They sign in again.`}
        busyLabel="Ending…"
        onConfirm={() => handlers.endSessions(user)}
      />
      {self ? (
        <button type="button" className="danger-outline" onClick={handlers.refuseSelfDelete}>
          Delete
        </button>
      ) : (
        <ConfirmButton label="Delete" question={`Delete user ${user.username}? They can no longer sign in.`} busyLabel="Deleting…" onConfirm={() => handlers.remove(user)} />
      )}
    </span>
  );
}
