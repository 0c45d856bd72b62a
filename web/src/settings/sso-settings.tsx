// Single sign-on on the settings page (admins with every customer; the server answers others 403):
// the providers with the redirect URI each must register, and whether users other than admins may
// still sign in with a password.
import { useState } from 'react';
import type { ApiBody, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import type { Customer } from '../api/types';
import { useSubmit } from '../ui/use-submit';
import { Badge, ConfirmButton, Empty, ErrorBanner, Loading } from '../ui/widgets';
import { useResource } from '../use-resource';
import { SsoProviderForm, type SsoProvider } from './sso-provider-form';

type PasswordLogin = ApiBody<'/sso/password-login'>['password_login'];

/** Only admins with every customer manage single sign-on; others are not even asked (the server would answer 403). */
export function SsoSettings() {
  const me = useResource((signal) => api<ApiBody<'/auth/me'>>('/auth/me', { signal }), []);
  if (!me.data) return null;
  // The console signs in users only; an API key's answer (no role) would not be an admin's either.
  if (!('role' in me.data) || me.data.role !== 'admin' || me.data.customer_ids !== null) return <p className="muted">Single sign-on is managed by admins with every customer.</p>;
  return <SsoAdmin />;
}

function SsoAdmin() {
  const providers = useResource((signal) => api<SsoProvider[]>('/sso/providers', { signal }), []);
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  const [editing, setEditing] = useState<SsoProvider | 'new' | null>(null);
  const [deleteError, setDeleteError] = useState<unknown>();

  const saved = () => {
    setEditing(null);
    providers.reload();
  };
  const remove = async (p: SsoProvider) => {
    setDeleteError(undefined);
    await api(`/sso/providers/${p.id}`, { method: 'DELETE' }).catch(setDeleteError);
    providers.reload();
  };
  return (
    <section className="settings-form" aria-label="Single sign-on">
      <h2>Single sign-on</h2>
      <ErrorBanner error={providers.error ?? deleteError} />
      {!providers.data ? (
        !providers.error && <Loading />
      ) : providers.data.length === 0 ? (
        <Empty>No single sign-on provider yet.</Empty>
      ) : (
        providers.data.map((p) => (
          <div key={p.id} className="card" data-testid="sso-provider">
            <h3>
              {p.name} {p.enabled ? <Badge tone="good">on the sign-in page</Badge> : <Badge tone="muted">off</Badge>}{' '}
              {p.auto_create && <Badge tone="warn">creates users</Badge>}
            </h3>
            <p className="muted settings-description">
              {p.issuer} · client {p.client_id} · secret {p.client_secret_hint}
            </p>
            <p className="settings-description">
              Redirect URI to register at the provider: <code data-testid="sso-redirect-uri">{p.redirect_uri}</code>
            </p>
            <div className="row">
              <button type="button" onClick={() => setEditing(p)}>Change</button>
              <ConfirmButton label="Delete" question={`Delete ${p.name}? Its users stay but can no longer sign in with it.`} busyLabel="Deleting…" onConfirm={() => remove(p)} />
            </div>
          </div>
        ))
      )}
      {editing ? (
        <SsoProviderForm key={editing === 'new' ? 'new' : editing.id} existing={editing === 'new' ? null : editing} customers={customers.data ?? []} onSaved={saved} onCancel={() => setEditing(null)} />
      ) : (
        <div className="row">
          <button type="button" onClick={() => setEditing('new')}>Add a provider</button>
        </div>
      )}
      <PasswordLoginSwitch />
    </section>
  );
}

function PasswordLoginSwitch() {
  const current = useResource((signal) => api<ApiBody<'/sso/password-login'>>('/sso/password-login', { signal }), []);
  const [choice, setChoice] = useState<PasswordLogin | null>(null);
  const [saved, setSaved] = useState(false);
  const value = choice ?? current.data?.password_login ?? 'everyone';
  const { busy, error, submit } = useSubmit(async () => {
    setSaved(false);
    await api('/sso/password-login', { method: 'PUT', body: { password_login: value } satisfies ApiRequest<'/sso/password-login', 'put'> });
    setSaved(true);
  });
  return (
    <form className="card" aria-label="Password sign-in" onSubmit={(e) => void submit(e)}>
      <label>
        Password sign-in
        <select value={value} onChange={(e) => { setChoice(e.target.value as PasswordLogin); setSaved(false); }} disabled={!current.data}>
          <option value="everyone">Everyone may sign in with a password</option>
          <option value="admins_only">Only admins; everyone else uses single sign-on</option>
        </select>
      </label>
      <p className="muted settings-description">Admins always keep their password, so a provider that fails cannot lock the server out.</p>
      <div className="row">
        <button type="submit" className="primary" disabled={busy || !current.data}>{busy ? 'Saving…' : 'Save'}</button>
      </div>
      <ErrorBanner error={current.error ?? error} />
      {saved && <div className="banner banner-info" role="status">Saved.</div>}
    </form>
  );
}
