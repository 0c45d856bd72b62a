// My account: who is signed in, since when the user exists, two-factor sign-in and passkeys. The password is
// changed on the users page (any user may set any user's password there).
import { api } from '../api/client';
import { Link } from '../router';
import { Badge, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { Passkeys } from './passkeys';
import { TwoFactor } from './two-factor';
import './account.css';

/** GET /auth/me for a signed-in user (an API key gets another shape, which the console never holds). */
interface Me {
  id: number;
  username: string;
  totp_enabled: boolean;
  created_at: string;
}

export function AccountPage() {
  const me = useResource((signal) => api<Me>('/auth/me', { signal }), []);
  return (
    <section className="account">
      <h1>My account</h1>
      <ErrorBanner error={me.error} />
      {!me.data ? (
        !me.error && <Loading />
      ) : (
        <>
          <div className="card">
            <dl className="facts" data-testid="account-facts">
              <div className="fact">
                <dt>Username</dt>
                <dd>{me.data.username}</dd>
              </div>
              <div className="fact">
                <dt>Created</dt>
                <dd>
                  <RelativeTime iso={me.data.created_at} />
                </dd>
              </div>
              <div className="fact">
                <dt>Two-factor sign-in</dt>
                <dd>{me.data.totp_enabled ? <Badge tone="good">on</Badge> : <Badge tone="muted">off</Badge>}</dd>
              </div>
            </dl>
            <p className="muted">
              To change your password, use <Link to="/users">Change password</Link> in your row on the users page.
            </p>
          </div>
          <TwoFactor enabled={me.data.totp_enabled} onChanged={me.reload} />
          <Passkeys />
        </>
      )}
    </section>
  );
}
