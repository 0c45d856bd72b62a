// My account: who is signed in, with which role and customers, since when the user exists, two-factor
// sign-in, passkeys and the sessions. The password is changed on the users page, by an admin with every
// customer.
import type { ApiBody } from '../api/api-types';
import { api } from '../api/client';
import { useAccess } from '../auth/access';
import { Link } from '../router';
import { Badge, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { Passkeys } from './passkeys';
import { SessionsSection } from './sessions';
import { TwoFactor } from './two-factor';
import type { Customer } from '../api/types';
import { scopeText } from '../users/access-fields';
import './account.css';

/** GET /auth/me for a signed-in user (an API key gets another shape, which the console never holds). */
type Me = Extract<ApiBody<'/auth/me'>, { username: string }>;

export function AccountPage() {
  const me = useResource((signal) => api<Me>('/auth/me', { signal }), []);
  const fullAdmin = useAccess().fullAdmin;
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
                <dt>Role</dt>
                <dd data-testid="account-role">{me.data.role}</dd>
              </div>
              <div className="fact">
                <dt>Customers</dt>
                <dd data-testid="account-customers">{me.data.customer_ids === null ? 'All customers' : <CustomerNames ids={me.data.customer_ids} />}</dd>
              </div>
              <div className="fact">
                <dt>Two-factor sign-in</dt>
                <dd>{me.data.totp_enabled ? <Badge tone="good">on</Badge> : <Badge tone="muted">off</Badge>}</dd>
              </div>
            </dl>
            <p className="muted">
              {fullAdmin ? (
                <>
                  To change your password, use <Link to="/users">Change password</Link> in your row on the users page.
                </>
              ) : (
                'To change your password or your access, ask an administrator.'
              )}
            </p>
          </div>
          <TwoFactor enabled={me.data.totp_enabled} onChanged={me.reload} />
          <Passkeys />
          <SessionsSection />
        </>
      )}
    </section>
  );
}

/** The customers a limited user has: the customers list, which the server filters to exactly those. */
function CustomerNames({ ids }: { ids: number[] }) {
  const customers = useResource((signal) => api<Customer[]>('/customers', { signal }), []);
  return <>{scopeText(ids, customers.data)}</>;
}
