// The users page's forms: create a user (with a role and customers, access-fields.tsx), and set a
// user's password inline in the list. Both check the server's rules as the user types (so a refusal is
// explained before the round trip) and keep what was typed when the server still refuses.
import { useId, useState } from 'react';
import type { ApiItem, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import type { Customer } from '../api/types';
import { ErrorBanner } from '../ui/widgets';
import { useSubmit } from '../ui/use-submit';
import { AccessFields, accessProblem, type AccessDraft } from './access-fields';

export type User = ApiItem<'/users'>;

// Least rights until the admin chooses more: a forgotten select should not hand out the server.
const NEW_USER_ACCESS: AccessDraft = { role: 'read', customerIds: null };

// The server's rules (users.schemas.ts, passwords.ts): bcrypt reads at most 72 bytes, so the limit is
// in UTF-8 bytes, not characters; the minimum counts characters (code points).
const USERNAME_RULE = /^[A-Za-z0-9._@-]{1,64}$/;
const MIN_PASSWORD_CHARS = 6;
const MAX_PASSWORD_BYTES = 72;

export const USERNAME_HINT = '1–64 characters: letters, digits and . _ @ -';
export const PASSWORD_HINT = `At least ${MIN_PASSWORD_CHARS} characters, at most ${MAX_PASSWORD_BYTES} bytes (letters with accents and symbols count as 2–4).`;

export function usernameProblem(username: string): string | null {
  if (username === '' || USERNAME_RULE.test(username)) return null;
  return username.length > 64 ? 'The username is longer than 64 characters.' : 'The username may only contain letters, digits and . _ @ -';
}

export function passwordProblem(password: string): string | null {
  if (password === '') return null;
  if ([...password].length < MIN_PASSWORD_CHARS) return `The password needs at least ${MIN_PASSWORD_CHARS} characters.`;
  if (new TextEncoder().encode(password).length > MAX_PASSWORD_BYTES) return `The password is longer than ${MAX_PASSWORD_BYTES} bytes; use fewer characters.`;
  return null;
}

/** The rule as a quiet hint, or the broken rule in warning colour once the typed value breaks it. */
function Hint({ id, hint, problem }: { id: string; hint: string; problem: string | null }) {
  return (
    <small id={id} className={problem ? 'badge-warn' : 'muted'} role={problem ? 'status' : undefined}>
      {problem ?? hint}
    </small>
  );
}

export function CreateUserForm({ customers, onCreated }: { customers: readonly Customer[]; onCreated: (user: User) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [access, setAccess] = useState<AccessDraft>(NEW_USER_ACCESS);
  const usernameHintId = useId();
  const passwordHintId = useId();
  const name = username.trim();
  const problems = { username: usernameProblem(name), password: passwordProblem(password) };

  const { busy, error, submit } = useSubmit(async () => {
    const problem = problems.username ?? problems.password ?? accessProblem(access);
    if (problem) throw new Error(problem);
    onCreated(await api<User>('/users', { method: 'POST', body: { username: name, password, role: access.role, customer_ids: access.customerIds } satisfies ApiRequest<'/users', 'post'> }));
    setUsername('');
    setPassword('');
    setAccess(NEW_USER_ACCESS);
  });

  return (
    <form className="card" onSubmit={(e) => void submit(e)} aria-label="Create a user">
      <h2>Create a user</h2>
      <div className="row">
        <label>
          Username
          <input name="username" autoComplete="off" value={username} onChange={(e) => setUsername(e.target.value)} required maxLength={64} aria-describedby={usernameHintId} />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} required aria-describedby={passwordHintId} />
        </label>
      </div>
      <AccessFields draft={access} customers={customers} onChange={setAccess} />
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create user'}
        </button>
      </div>
      <p>
        <Hint id={usernameHintId} hint={`Username: ${USERNAME_HINT}.`} problem={problems.username} />
        <br />
        <Hint id={passwordHintId} hint={`Password: ${PASSWORD_HINT}`} problem={problems.password} />
      </p>
      <ErrorBanner error={error} />
    </form>
  );
}

/**
 * Sets a user's password. The server ends every session of that user, so the note says so; for the
 * signed-in user that includes this one (the caller signs out after `onSaved`).
 */
export function ChangePasswordForm({ user, self, onSaved, onCancel }: { user: User; self: boolean; onSaved: () => void; onCancel: () => void }) {
  const [password, setPassword] = useState('');
  const hintId = useId();
  const problem = passwordProblem(password);
  const { busy, error, submit } = useSubmit(async () => {
    if (problem) throw new Error(problem);
    await api(`/users/${user.id}/password`, { method: 'PUT', body: { password } satisfies ApiRequest<'/users/{id}/password', 'put'> });
    onSaved();
  });

  const consequence = self
    ? 'This signs you out everywhere, this browser included; sign in again with the new password.'
    : `This ends all of ${user.username}'s sessions; they sign in again with the new password.`;
  return (
    <form onSubmit={(e) => void submit(e)} data-testid="change-password-form">
      <div className="row">
        <label>
          New password
          <input name="new-password" type="password" autoComplete="new-password" value={password} onChange={(e) => setPassword(e.target.value)} required autoFocus aria-describedby={hintId} />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
      <Hint id={hintId} hint={`${consequence} ${PASSWORD_HINT}`} problem={problem} />
      <ErrorBanner error={error} />
    </form>
  );
}
