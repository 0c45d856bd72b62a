// Signing in with a passkey from the sign-in page, kept apart from the page's password form: the second
// step with a passkey (for a pending sign-in that offers one), and, when the server allows it, signing in
// with a passkey alone. Both hand the finished sign-in (or an error text) back to the page.
import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { useEffect, useState } from 'react';
import type { ApiBody, ApiRequest } from '../api/api-types';
import { api, ApiError } from '../api/client';
import { passkeyErrorText } from './passkey-errors';

export type SignedIn = ApiBody<'/auth/passkey-login', 'post'>;

interface Handlers {
  onSignedIn: (answer: SignedIn) => void;
  onError: (text: string, err: unknown) => void;
}

/** Asks the browser for a passkey answering the options, turning its refusals into words. */
async function askBrowser(optionsJSON: PublicKeyCredentialRequestOptionsJSON) {
  try {
    return await startAuthentication({ optionsJSON });
  } catch (err) {
    throw new Error(passkeyErrorText(err));
  }
}

const textOf = (err: unknown) => (err instanceof ApiError && err.code === 'INVALID_CREDENTIALS' ? `${err.message}.` : err instanceof Error ? err.message : String(err));

/** "Use a passkey" at the second step of a password sign-in. */
export function PasskeySecondStep({ pendingToken, onSignedIn, onError }: Handlers & { pendingToken: string }) {
  const [busy, setBusy] = useState(false);
  const use = async () => {
    setBusy(true);
    try {
      const options = await api<PublicKeyCredentialRequestOptionsJSON>('/auth/2fa/passkey-options', { method: 'POST', body: { pending_token: pendingToken } satisfies ApiRequest<'/auth/2fa/passkey-options', 'post'>, anonymous: true });
      const response = await askBrowser(options);
      // Sent as the browser library made it (its types are not the API's to the letter; the server checks it).
      onSignedIn(await api<SignedIn>('/auth/2fa/passkey', { method: 'POST', body: { pending_token: pendingToken, response }, anonymous: true }));
    } catch (err) {
      onError(textOf(err), err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" className="primary" disabled={busy} onClick={() => void use()}>
      {busy ? 'Waiting for the passkey…' : 'Use a passkey'}
    </button>
  );
}

/** "Sign in with a passkey": shown only while the server allows a passkey alone. */
export function PasswordlessSignIn({ onSignedIn, onError }: Handlers) {
  const [offered, setOffered] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const controller = new AbortController();
    api<ApiBody<'/auth/passkey-login'>>('/auth/passkey-login', { signal: controller.signal, anonymous: true })
      .then((status) => setOffered(status.passwordless_login))
      // An older server or a network problem: the password form still works, so just offer nothing more.
      .catch(() => undefined);
    return () => controller.abort();
  }, []);
  if (!offered) return null;
  const use = async () => {
    setBusy(true);
    try {
      const options = await api<PublicKeyCredentialRequestOptionsJSON>('/auth/passkey-options', { method: 'POST', body: {}, anonymous: true });
      const response = await askBrowser(options);
      onSignedIn(await api<SignedIn>('/auth/passkey-login', { method: 'POST', body: { response }, anonymous: true }));
    } catch (err) {
      onError(textOf(err), err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" disabled={busy} onClick={() => void use()}>
      {busy ? 'Waiting for the passkey…' : 'Sign in with a passkey'}
    </button>
  );
}
