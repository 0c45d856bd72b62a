// Adding or changing a single sign-on provider. The client secret comes back only as a hint, so when
// changing a provider its field starts empty: left empty the stored secret stays. Mappings give a new
// user a role and a customer (or every customer) by a value of the role claim (a group, an app role).
import { useId, useState } from 'react';
import type { ApiItem, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import type { Customer } from '../api/types';
import { CustomerOptions } from '../ui/customer-options';
import { useSubmit } from '../ui/use-submit';
import { ErrorBanner } from '../ui/widgets';

export type SsoProvider = ApiItem<'/sso/providers'>;
export type Mapping = SsoProvider['mappings'][number];
export type Role = SsoProvider['default_role'];

const ROLES: readonly Role[] = ['read', 'write', 'admin'];
/** A customer picker's value: '' none, '*' every customer, else one customer's id. */
const toChoice = (ids: number[] | null) => (ids === null ? '*' : ids.length > 0 ? String(ids[0]) : '');
const fromChoice = (choice: string): number[] | null => (choice === '*' ? null : choice === '' ? [] : [Number(choice)]);

function CustomerChoice({ value, onChange, customers, label }: { value: string; onChange: (v: string) => void; customers: readonly Customer[]; label: string }) {
  return (
    <select aria-label={label} value={value} onChange={(e) => onChange(e.target.value)}>
      <CustomerOptions customers={customers} emptyLabel="No customer" />
      <option value="*">Every customer</option>
    </select>
  );
}

export function SsoProviderForm({ existing, customers, onSaved, onCancel }: { existing: SsoProvider | null; customers: readonly Customer[]; onSaved: () => void; onCancel: () => void }) {
  const id = useId();
  const [fields, setFields] = useState({
    name: existing?.name ?? '',
    issuer: existing?.issuer ?? '',
    client_id: existing?.client_id ?? '',
    client_secret: '',
    scopes: existing?.scopes ?? 'openid profile email',
    username_claim: existing?.username_claim ?? 'preferred_username',
    role_claim: existing?.role_claim ?? '',
  });
  const [defaultRole, setDefaultRole] = useState<Role>(existing?.default_role ?? 'read');
  const [defaultCustomers, setDefaultCustomers] = useState(toChoice(existing?.default_customer_ids ?? []));
  const [mappings, setMappings] = useState(existing?.mappings.map((m) => ({ value: m.value, role: m.role, customers: toChoice(m.customer_ids) })) ?? []);
  const [autoCreate, setAutoCreate] = useState(existing?.auto_create ?? false);
  const [enabled, setEnabled] = useState(existing?.enabled ?? true);

  const { busy, error, submit } = useSubmit(async () => {
    const body = {
      ...fields,
      name: fields.name.trim(),
      issuer: fields.issuer.trim(),
      client_id: fields.client_id.trim(),
      role_claim: fields.role_claim.trim() || null,
      default_role: defaultRole,
      default_customer_ids: fromChoice(defaultCustomers),
      mappings: mappings.filter((m) => m.value.trim()).map((m) => ({ value: m.value.trim(), role: m.role, customer_ids: fromChoice(m.customers) })),
      auto_create: autoCreate,
      enabled,
    } satisfies ApiRequest<'/sso/providers', 'post'>;
    const { client_secret, ...rest } = body;
    // Left empty when changing: the stored secret stays.
    const payload = existing && !client_secret ? rest : body;
    await api(existing ? `/sso/providers/${existing.id}` : '/sso/providers', { method: existing ? 'PUT' : 'POST', body: payload satisfies ApiRequest<'/sso/providers/{id}', 'put'> });
    onSaved();
  });

  const text = (key: keyof typeof fields, label: string, extra: { required?: boolean; placeholder?: string; type?: string; hint?: string } = {}) => (
    <label>
      {label}
      <input
        type={extra.type ?? 'text'}
        value={fields[key]}
        onChange={(e) => setFields({ ...fields, [key]: e.target.value })}
        required={extra.required}
        placeholder={extra.placeholder}
        autoComplete="off"
      />
      {extra.hint && <small className="muted">{extra.hint}</small>}
    </label>
  );

  return (
    <form className="card settings-form" aria-label={existing ? `Change ${existing.name}` : 'Add a provider'} onSubmit={(e) => void submit(e)}>
      <h3>{existing ? `Change ${existing.name}` : 'Add a provider'}</h3>
      {text('name', 'Provider name', { required: true, placeholder: 'Microsoft', hint: 'The button says "Sign in with <name>".' })}
      {text('issuer', 'Issuer URL', { required: true, placeholder: 'https://login.microsoftonline.com/<tenant id>/v2.0' })}
      {text('client_id', 'Client ID', { required: true })}
      {text('client_secret', 'Client secret', {
        type: 'password',
        required: !existing,
        placeholder: existing ? `unchanged (${existing.client_secret_hint})` : '',
        hint: 'Stored encrypted; shown afterwards only as its last characters.',
      })}
      {text('scopes', 'Scopes', { required: true })}
      {text('username_claim', 'Username claim', { required: true, hint: 'preferred_username or email for Microsoft Entra ID, email for Google.' })}
      {text('role_claim', 'Role claim (optional)', { placeholder: 'groups', hint: 'The claim whose values the mappings below match.' })}
      <fieldset>
        <legend>Mappings for new users (first match wins)</legend>
        {mappings.map((m, i) => (
          <div key={i} className="row" data-testid="sso-mapping">
            <input aria-label={`Mapping ${i + 1} value`} value={m.value} placeholder="claim value" onChange={(e) => setMappings(mappings.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)))} />
            <select aria-label={`Mapping ${i + 1} role`} value={m.role} onChange={(e) => setMappings(mappings.map((x, j) => (j === i ? { ...x, role: e.target.value as Role } : x)))}>
              {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
            </select>
            <CustomerChoice label={`Mapping ${i + 1} customer`} value={m.customers} customers={customers} onChange={(v) => setMappings(mappings.map((x, j) => (j === i ? { ...x, customers: v } : x)))} />
            <button type="button" onClick={() => setMappings(mappings.filter((_, j) => j !== i))}>Remove</button>
          </div>
        ))}
        <button type="button" onClick={() => setMappings([...mappings, { value: '', role: 'read', customers: '' }])}>Add mapping</button>
        <div className="row">
          <label htmlFor={`${id}-role`}>Otherwise</label>
          <select id={`${id}-role`} aria-label="Default role" value={defaultRole} onChange={(e) => setDefaultRole(e.target.value as Role)}>
            {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
          <CustomerChoice label="Default customer" value={defaultCustomers} customers={customers} onChange={setDefaultCustomers} />
        </div>
      </fieldset>
      <label className="inline">
        <input type="checkbox" checked={autoCreate} onChange={(e) => setAutoCreate(e.target.checked)} /> Create users on their first sign-in
      </label>
      <label className="inline">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Show on the sign-in page
      </label>
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : existing ? 'Save provider' : 'Add provider'}
        </button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
