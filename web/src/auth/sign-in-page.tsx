// Sign-in in two steps when the user has two-factor authentication on: password first, then the
// 6-digit code from the authenticator app (contract §1). A wrong code keeps the pending sign-in (it
// allows a few tries); an expired one starts over. A user with a passkey may use it instead of the code,
// and, when the server allows it, sign in with a passkey alone (passkey-sign-in.tsx).
import { useState, type FormEvent } from 'react';
import type { ApiBody, ApiRequest } from '../api/api-types';
import { api, ApiError } from '../api/client';
import { startSession } from '../api/session';
import { errorText } from '../ui/widgets';
import { PasskeySecondStep, PasswordlessSignIn } from './passkey-sign-in';
import { SsoButtons, useSsoReturn } from './sso-sign-in';

/** A signed-in session, or (`totp_required`) the second step's pending sign-in. */
type LoginAnswer = ApiBody<'/auth/login', 'post'>;
type SignedIn = Exclude<LoginAnswer, { totp_required: true }>;

function describe(err: unknown, secondStep: boolean): string {
  if (!(err instanceof ApiError) || err.code !== 'INVALID_CREDENTIALS') return errorText(err);
  if (!secondStep) return 'Wrong username or password.';
  return err.message.startsWith('Pending token') ? 'The sign-in has expired. Please enter your password again.' : `${err.message}. Try again.`;
}

export function SignInPage({ notice }: { notice: string | null }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [pending, setPending] = useState<string | null>(null);
  const [methods, setMethods] = useState<string[]>(['totp']);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const finish = ({ token, expires_at, user }: SignedIn) =>
    startSession({ token, expiresAt: expires_at, username: user.username, role: user.role, customerIds: user.customer_ids });
  // Back from a single sign-on provider: signed in, or on to the code step like a password sign-in.
  const ssoBusy = useSsoReturn({
    onAnswer: (answer) => ('totp_required' in answer ? setPending(answer.pending_token) : finish(answer)),
    onError: setError,
  });

  const passkeyHandlers = {
    onSignedIn: finish,
    onError: (text: string, err: unknown) => {
      setError(pending !== null && err instanceof ApiError ? describe(err, true) : text);
      if (err instanceof ApiError && err.message.startsWith('Pending token')) setPending(null);
    },
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (pending === null) {
        const answer = await api<LoginAnswer>('/auth/login', { method: 'POST', body: { username, password } satisfies ApiRequest<'/auth/login', 'post'>, anonymous: true });
        if ('totp_required' in answer) {
          setPending(answer.pending_token);
          setMethods(answer.methods);
          setPassword('');
        }
        else finish(answer);
      } else {
        finish(await api<SignedIn>('/auth/2fa/validate', { method: 'POST', body: { pending_token: pending, code: code.trim() } satisfies ApiRequest<'/auth/2fa/validate', 'post'>, anonymous: true }));
      }
    } catch (err) {
      setError(describe(err, pending !== null));
      // The pending sign-in expired, was used or ran out of tries: start again from the password.
      if (pending !== null && err instanceof ApiError && err.message.startsWith('Pending token')) {
        setPending(null);
        setCode('');
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <form onSubmit={(e) => void submit(e)} className="card sign-in-card" aria-label="Sign in">
        <h1>RMM console</h1>
        {/* The notice ("You have signed out.") belongs to the first step; the second asks for a code. */}
        {notice && !error && pending === null && <div className="banner banner-info" role="status">{notice}</div>}
        {error && <div className="banner banner-error" role="alert">{error}</div>}
        {pending === null ? (
          <>
            <label>
              Username
              <input name="username" autoComplete="username" value={username} onChange={(e) => setUsername(e.target.value)} required autoFocus />
            </label>
            <label>
              Password
              <input name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
            </label>
          </>
        ) : !methods.includes('totp') ? null : (
          <label>
            Authentication code
            <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} value={code} onChange={(e) => setCode(e.target.value)} required autoFocus />
            <small className="muted">The 6-digit code from your authenticator app.</small>
          </label>
        )}
        {(pending === null || methods.includes('totp')) && (
          <button type="submit" className="primary" disabled={busy || ssoBusy}>
            {busy ? 'Signing in…' : pending === null ? 'Sign in' : 'Verify'}
          </button>
        )}
        {pending === null ? <PasswordlessSignIn {...passkeyHandlers} /> : methods.includes('passkey') && <PasskeySecondStep pendingToken={pending} {...passkeyHandlers} />}
        {pending !== null && (
          <button type="button" className="link" onClick={() => { setPending(null); setCode(''); setError(null); }}>
            Use another account
          </button>
        )}
        {pending === null && <SsoButtons />}
      </form>
    </main>
  );
}
