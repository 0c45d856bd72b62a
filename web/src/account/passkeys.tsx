// Passkeys on the account page: the user's passkeys (name, added, last used), adding one through the
// browser's own passkey dialog (@simplewebauthn/browser), renaming and deleting with a confirmation.
// A passkey counts as a second factor: once one exists, signing in with the password asks for it (or
// the authentication code). While the server cannot make passkeys (PUBLIC_URL unset), the page says
// why instead of offering the form.
import { startRegistration, type PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { useState } from 'react';
import type { ApiBody, ApiItem, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { useSubmit } from '../ui/use-submit';
import { ConfirmButton, Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { passkeyErrorText } from '../auth/passkey-errors';

export function Passkeys() {
  const list = useResource((signal) => api<ApiItem<'/auth/passkeys'>[]>('/auth/passkeys', { signal }), []);
  const registration = useResource((signal) => api<ApiBody<'/auth/passkeys/registration'>>('/auth/passkeys/registration', { signal }), []);
  return (
    <section className="card passkeys" aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <p className="muted">
        A passkey is a security key or your device's screen lock (fingerprint, face, PIN). Once you have one, signing in with your password asks for a passkey or your
        authentication code.
      </p>
      <ErrorBanner error={list.error} />
      {!list.data ? (
        !list.error && <Loading />
      ) : list.data.length === 0 ? (
        <Empty>No passkeys yet.</Empty>
      ) : (
        <ul className="passkey-list">
          {list.data.map((p) => (
            <PasskeyRow key={`${p.id}-${p.name}`} passkey={p} onChanged={list.reload} />
          ))}
        </ul>
      )}
      <ErrorBanner error={registration.error} />
      {registration.data?.available === false ? (
        <div className="banner banner-warn" role="status" data-testid="passkeys-unavailable">
          {registration.data.reason}
        </div>
      ) : (
        registration.data && <AddPasskey onAdded={list.reload} />
      )}
    </section>
  );
}

function PasskeyRow({ passkey, onChanged }: { passkey: ApiItem<'/auth/passkeys'>; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(passkey.name);
  const rename = useSubmit(async () => {
    await api(`/auth/passkeys/${passkey.id}`, { method: 'PATCH', body: { name } satisfies ApiRequest<'/auth/passkeys/{id}', 'patch'> });
    setEditing(false);
    onChanged();
  });
  const [deleteError, setDeleteError] = useState<unknown>();
  const remove = async () => {
    try {
      await api(`/auth/passkeys/${passkey.id}`, { method: 'DELETE' });
      onChanged();
    } catch (err) {
      setDeleteError(err);
    }
  };
  return (
    <li className="passkey-row" data-testid="passkey-row">
      {editing ? (
        <form className="row" onSubmit={(e) => void rename.submit(e)}>
          <label>
            New name
            <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required autoFocus />
          </label>
          <button type="submit" className="primary" disabled={rename.busy}>
            Save
          </button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </form>
      ) : (
        <div className="row">
          <strong className="passkey-name">{passkey.name}</strong>
          <span className="muted">
            added <RelativeTime iso={passkey.created_at} />, {passkey.last_used_at ? <>last used <RelativeTime iso={passkey.last_used_at} /></> : 'never used'}
          </span>
          <button type="button" onClick={() => setEditing(true)}>
            Rename
          </button>
          <ConfirmButton label="Delete" question={`Delete passkey ${passkey.name}?`} busyLabel="Deleting…" onConfirm={remove} />
        </div>
      )}
      <ErrorBanner error={rename.error ?? deleteError} />
    </li>
  );
}

function AddPasskey({ onAdded }: { onAdded: () => void }) {
  const [name, setName] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    const optionsJSON = await api<PublicKeyCredentialCreationOptionsJSON>('/auth/passkeys/registration-options', { method: 'POST', body: {} });
    let response;
    try {
      response = await startRegistration({ optionsJSON });
    } catch (err) {
      throw new Error(passkeyErrorText(err));
    }
    // The browser library's answer goes as it made it: its types lack the index signature the API's
    // `clientExtensionResults` has, so it is not checked against ApiRequest here (the server checks it).
    await api('/auth/passkeys', { method: 'POST', body: { name: name.trim(), response } });
    setName('');
    onAdded();
  });
  return (
    <form className="row passkey-add" onSubmit={(e) => void submit(e)} aria-label="Add a passkey">
      <label>
        Passkey name
        <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} placeholder="e.g. YubiKey, work laptop" required />
      </label>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Waiting for the passkey…' : 'Add a passkey'}
      </button>
      <ErrorBanner error={error} />
    </form>
  );
}
