// What a user may do (issue 35): a role on the ladder read < write < admin, and either every customer
// or a set of them. The same two fields serve the create form and the inline "Change access" form;
// the scope is a list of checkboxes because a technician typically gets two or three customers of
// dozens, which a <select multiple> makes easy to lose with one click.
import { useId, useState } from 'react';
import type { ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import type { Role } from '../api/session';
import type { Customer } from '../api/types';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner } from '../ui/widgets';

export const ROLES: readonly { id: Role; label: string }[] = [
  { id: 'read', label: 'read: looks only' },
  { id: 'write', label: 'write: also changes and runs commands' },
  { id: 'admin', label: 'admin: also users, settings and the terminal' },
];

/** The customers a user is limited to, by name; "All customers" when not limited. */
export function scopeText(customerIds: readonly number[] | null, customers: readonly Customer[] | undefined): string {
  if (customerIds === null) return 'All customers';
  if (customerIds.length === 0) return 'No customers';
  const byId = new Map((customers ?? []).map((c) => [c.id, c]));
  return customerIds
    .map((id) => byId.get(id)?.name ?? `customer #${id}`)
    .sort((a, b) => a.localeCompare(b))
    .join(', ');
}

export interface AccessDraft {
  role: Role;
  /** null: every customer. */
  customerIds: number[] | null;
}

/** The draft as the API takes it, or why it cannot be sent. */
export function accessProblem(draft: AccessDraft): string | null {
  return draft.customerIds !== null && draft.customerIds.length === 0 ? 'Pick at least one customer, or give the user every customer.' : null;
}

export function AccessFields({ draft, customers, onChange }: { draft: AccessDraft; customers: readonly Customer[]; onChange: (draft: AccessDraft) => void }) {
  const name = useId();
  const limited = draft.customerIds !== null;
  const toggle = (id: number, on: boolean) => {
    const ids = new Set(draft.customerIds ?? []);
    if (on) ids.add(id);
    else ids.delete(id);
    onChange({ ...draft, customerIds: [...ids] });
  };
  return (
    <div className="access-fields">
      <label>
        Role
        <select value={draft.role} onChange={(e) => onChange({ ...draft, role: e.target.value as Role })}>
          {ROLES.map((r) => (
            <option key={r.id} value={r.id}>
              {r.label}
            </option>
          ))}
        </select>
      </label>
      <fieldset className="access-scope">
        <legend>Customers</legend>
        <label className="inline">
          <input type="radio" name={name} checked={!limited} onChange={() => onChange({ ...draft, customerIds: null })} />
          All customers
        </label>
        <label className="inline">
          <input type="radio" name={name} checked={limited} onChange={() => onChange({ ...draft, customerIds: draft.customerIds ?? [] })} />
          Only these customers
        </label>
        {limited && (
          <div className="access-customers" role="group" aria-label="Customers of this user">
            {customers.length === 0 && <span className="muted">No customers yet.</span>}
            {customers.map((c) => (
              <label key={c.id} className="inline">
                <input type="checkbox" checked={draft.customerIds?.includes(c.id) ?? false} onChange={(e) => toggle(c.id, e.target.checked)} />
                {c.number} {c.name}
              </label>
            ))}
          </div>
        )}
      </fieldset>
    </div>
  );
}

/**
 * The part of a user that ChangeAccessForm reads. The form is generic over the caller's user type
 * (User, user-forms.tsx, which imports this file): the PATCH answers the whole user, as the list shows it.
 */
export interface AccessHolder {
  id: number;
  username: string;
  role: Role;
  customer_ids: number[] | null;
}

/**
 * Changes a user's role and customers inline in the list. The server ends that user's sessions (their
 * rights change at once, not at their next sign-in), so the form says so; for the signed-in user that
 * includes this one (the caller signs out after `onSaved`).
 */
export function ChangeAccessForm<U extends AccessHolder>({ user, self, customers, onSaved, onCancel }: { user: U; self: boolean; customers: readonly Customer[]; onSaved: (user: U) => void; onCancel: () => void }) {
  const [draft, setDraft] = useState<AccessDraft>({ role: user.role, customerIds: user.customer_ids });
  const { busy, error, submit } = useSubmit(async () => {
    const problem = accessProblem(draft);
    if (problem) throw new Error(problem);
    onSaved(await api<U>(`/users/${user.id}`, { method: 'PATCH', body: { role: draft.role, customer_ids: draft.customerIds } satisfies ApiRequest<'/users/{id}', 'patch'> }));
  });
  const consequence = self
    ? 'Saving signs you out everywhere, this browser included; sign in again to continue with the new access.'
    : `Saving ends all of ${user.username}'s sessions; they sign in again with the new access.`;
  return (
    <form onSubmit={(e) => void submit(e)} data-testid="change-access-form" aria-label={`Change access of ${user.username}`}>
      <AccessFields draft={draft} customers={customers} onChange={setDraft} />
      <p className="muted">{consequence}</p>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save access'}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
