// Two-factor sign-in on the account page: enrolment (QR code and the key for typing in, confirmed with
// a first code) while it is off, and turning it off (password and a current code) while it is on.
import { useState, type FormEvent } from 'react';
import type { ApiBody, ApiRequest } from '../api/api-types';
import { api } from '../api/client';
import { endSession } from '../api/session';
import { QrCode } from '../ui/qr-code';
import { ErrorBanner } from '../ui/widgets';
import { useSubmit } from '../ui/use-submit';

type Enrolment = ApiBody<'/auth/2fa/setup', 'post'>;

/** Authenticator apps show "123 456"; the server wants the digits. */
const digitsOf = (code: string) => code.replace(/\s/g, '');

/** Base32 keys are typed by hand from the screen: blocks of four are easier to keep one's place in. */
const inBlocksOfFour = (secret: string) => (secret.match(/.{1,4}/g) ?? []).join(' ');

function CodeInput({ value, onChange }: { value: string; onChange: (code: string) => void }) {
  return (
    <label>
      Authentication code
      <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]{6,7}" maxLength={7} value={value} onChange={(e) => onChange(e.target.value)} required />
    </label>
  );
}

export function TwoFactor({ enabled, onChanged }: { enabled: boolean; onChanged: () => void }) {
  // Shown at once on success, before the account's reload confirms it.
  const [turnedOn, setTurnedOn] = useState(false);
  return (
    <section className="card two-factor" aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">Two-factor sign-in</h2>
      {enabled || turnedOn ? (
        <>
          <p className={turnedOn ? 'banner banner-info' : undefined} role="status">
            Two-factor sign-in is on: signing in asks for your password and then a code from your authenticator app.
          </p>
          <TurnOffForm />
        </>
      ) : (
        <EnrolmentSteps
          onTurnedOn={() => {
            setTurnedOn(true);
            onChanged();
          }}
        />
      )}
    </section>
  );
}

function EnrolmentSteps({ onTurnedOn }: { onTurnedOn: () => void }) {
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [code, setCode] = useState('');
  // Each setup replaces the pending key on the server; only a confirmed one is ever used.
  const setup = useSubmit(async () => setEnrolment(await api<Enrolment>('/auth/2fa/setup', { method: 'POST', body: {} })));
  const confirmation = useSubmit(async () => {
    await api('/auth/2fa/confirm', { method: 'POST', body: { code: digitsOf(code) } satisfies ApiRequest<'/auth/2fa/confirm', 'post'> });
    onTurnedOn();
  });
  const busy = setup.busy || confirmation.busy;
  const error = confirmation.error ?? setup.error;
  const start = setup.submit;
  const confirm = (event: FormEvent) => void confirmation.submit(event);

  if (!enrolment) {
    return (
      <>
        <p>Two-factor sign-in is off: signing in asks only for your password. Turned on, it also asks for a 6-digit code from an authenticator app on your phone.</p>
        <button type="button" className="primary" disabled={busy} onClick={() => void start()}>
          {busy ? 'Preparing…' : 'Set up two-factor sign-in'}
        </button>
        <ErrorBanner error={error} />
      </>
    );
  }
  return (
    <div className="two-factor-setup">
      <QrCode text={enrolment.otpauth_url} label="QR code for your authenticator app" />
      <div className="two-factor-steps">
        <p>1. Scan the QR code with an authenticator app, or enter this key in the app by hand:</p>
        <code className="secret-value two-factor-secret" data-testid="totp-secret">
          {inBlocksOfFour(enrolment.secret)}
        </code>
        <p>2. Enter the 6-digit code the app shows. The app's key takes effect once its code is accepted.</p>
        <form onSubmit={confirm}>
          <div className="row">
            <CodeInput value={code} onChange={setCode} />
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Checking…' : 'Turn on'}
            </button>
            <button type="button" disabled={busy} onClick={() => setEnrolment(null)}>
              Cancel
            </button>
          </div>
          <ErrorBanner error={error} />
        </form>
      </div>
    </div>
  );
}

function TurnOffForm() {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    await api('/auth/2fa/disable', { method: 'POST', body: { password, code: digitsOf(code) } satisfies ApiRequest<'/auth/2fa/disable', 'post'> });
    // The server has ended every session of this user, this one included.
    endSession('Two-factor sign-in is off. Please sign in again with your password.');
  });

  return (
    <form onSubmit={(e) => void submit(e)} aria-labelledby="two-factor-off-title">
      <h3 id="two-factor-off-title">Turn off two-factor sign-in</h3>
      <p className="banner banner-warn">Turning it off signs you out everywhere, this browser included. Signing in then asks only for your password.</p>
      <div className="row">
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
        </label>
        <CodeInput value={code} onChange={setCode} />
        <button type="submit" className="danger" disabled={busy}>
          {busy ? 'Turning off…' : 'Turn off'}
        </button>
      </div>
      <ErrorBanner error={error} />
    </form>
  );
}
