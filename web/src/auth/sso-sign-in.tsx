// Single sign-on on the sign-in page: a button per provider (a plain link: the server sends the
// browser on to the provider), and the return from it. The server sends the browser back to the
// console with a one-time ticket, or a message, in the URL's fragment; the ticket is taken out of the
// address at once and traded for the session, or for the TOTP step when the provider did not vouch for
// a second factor.
import { useEffect, useState } from 'react';
import type { ApiBody, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { errorText } from '../ui/widgets';
import './sso.css';

/** A signed-in session, or the second step (the provider did not vouch for a second factor). */
export type SsoAnswer = ApiBody<'/auth/sso/exchange', 'post'>;

/** What the address brought back from a provider, read once (and removed from the address). */
function takeFragment(): { ticket: string | null; error: string | null } {
  const params = new URLSearchParams(window.location.hash.slice(1));
  const ticket = params.get('sso_ticket');
  const error = params.get('sso_error');
  if (ticket !== null || error !== null) history.replaceState(null, '', window.location.pathname + window.location.search);
  return { ticket, error };
}

/** Trades a returning ticket; calls back with the answer or the message to show. */
export function useSsoReturn(handlers: { onAnswer: (answer: SsoAnswer) => void; onError: (message: string) => void }): boolean {
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const { ticket, error } = takeFragment();
    if (error !== null) handlers.onError(error);
    if (ticket === null) return;
    setBusy(true);
    api<SsoAnswer>('/auth/sso/exchange', { method: 'POST', body: { ticket } satisfies ApiRequest<'/auth/sso/exchange', 'post'>, anonymous: true })
      .then(handlers.onAnswer, (err: unknown) => handlers.onError(`Single sign-on did not complete: ${errorText(err)}`))
      .finally(() => setBusy(false));
    // Once, when the page opens: the fragment is gone afterwards.
  }, []);
  return busy;
}

export function SsoButtons() {
  const [providers, setProviders] = useState<ApiBody<'/auth/sso/providers'>>([]);
  useEffect(() => {
    const controller = new AbortController();
    // Without providers (or when the list cannot be read) the page is the password form alone.
    api<ApiBody<'/auth/sso/providers'>>('/auth/sso/providers', { anonymous: true, signal: controller.signal }).then(setProviders, () => undefined);
    return () => controller.abort();
  }, []);
  if (providers.length === 0) return null;
  return (
    <div className="sso-buttons" aria-label="Single sign-on">
      <p className="muted sso-or">or</p>
      {providers.map((p) => (
        <a key={p.id} className="button sso-button" href={p.start_url}>
          Sign in with {p.name}
        </a>
      ))}
    </div>
  );
}
