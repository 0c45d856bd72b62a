// The account page's sessions (issue 35): every browser or device signed in as this user, how and when
// it began and was last used, with "End" for one (a lost laptop) and "Sign out everywhere". Ending the
// session of this browser signs out here too. Kept in its own file: the account page gathers sections
// (two-factor, passkeys, this) that are written separately.
import type { ApiItem } from '../api/api-types';
import { api } from '../api/client';
import { endSession } from '../api/session';
import { useActionError } from '../ui/use-action-error';
import { ActionsHeader, Badge, ConfirmButton, Empty, ErrorBanner, Loading, RelativeTime } from '../ui/widgets';
import { useResource } from '../use-resource';
import { TableFrame } from '../ui/table-frame';

/** GET /auth/sessions. */
type UserSession = ApiItem<'/auth/sessions'>;

const METHODS: Record<string, string> = { password: 'password', totp: 'password and code', passkey: 'passkey', sso: 'single sign-on' };

// Most specific first: Edge and Opera also say Chrome, Chrome also says Safari, Android also says Linux.
const BROWSERS: readonly [RegExp, string][] = [
  [/Edg\//, 'Edge'],
  [/OPR\//, 'Opera'],
  [/Firefox\//, 'Firefox'],
  [/HeadlessChrome\//, 'Headless Chrome'],
  [/Chrom(e|ium)\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/^curl\//, 'curl'],
];
const SYSTEMS: readonly [RegExp, string][] = [
  [/Windows/, 'Windows'],
  [/iPhone|iPad/, 'iOS'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/Android/, 'Android'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** "Firefox on Windows" from a user agent string (the whole string is the cell's tooltip). */
export function deviceName(userAgent: string): string {
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? (userAgent.trim() ? userAgent.slice(0, 40) : 'Unknown device');
}

export function SessionsSection() {
  const sessions = useResource((signal) => api<UserSession[]>('/auth/sessions', { signal }), []);
  const { error, guard } = useActionError();
  const end = (session: UserSession) =>
    guard(async () => {
      await api(`/auth/sessions/${encodeURIComponent(session.id)}`, { method: 'DELETE' });
      if (session.current) endSession('You ended the session of this browser. Please sign in again.');
      else sessions.reload();
    });
  const signOutEverywhere = () =>
    guard(async () => {
      await api('/auth/logout', { method: 'POST', body: {} });
      endSession('You have signed out everywhere.');
    });
  const list = [...(sessions.data ?? [])].sort((a, b) => Number(b.current) - Number(a.current) || Date.parse(b.last_used_at) - Date.parse(a.last_used_at));

  return (
    <section className="card sessions" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <p className="muted">Where you are signed in. End a session you do not recognise, or one on a device you no longer have.</p>
      <ErrorBanner error={sessions.error ?? error} />
      {!sessions.data ? (
        !sessions.error && <Loading />
      ) : list.length === 0 ? (
        <Empty>No sessions.</Empty>
      ) : (
        <TableFrame label="Sessions">
          <table data-testid="sessions-table" className="stack">
            <thead>
              <tr>
                <th>Device</th>
                <th>Address</th>
                <th className="wide-only">Signed in with</th>
                <th>Started</th>
                <th>Last used</th>
                <ActionsHeader />
              </tr>
            </thead>
            <tbody>
              {list.map((s) => (
                <tr key={s.id} data-testid="session-row" data-current={s.current || undefined}>
                  <td data-label="Device" title={s.user_agent || undefined}>
                    {deviceName(s.user_agent)} {s.current && <Badge tone="good">this device</Badge>}
                  </td>
                  <td data-label="Address" className="mono">{s.ip || <span className="muted">–</span>}</td>
                  <td data-label="Signed in with" className="wide-only">{METHODS[s.method] ?? s.method}</td>
                  <td data-label="Started">
                    <RelativeTime iso={s.created_at} />
                  </td>
                  <td data-label="Last used">
                    <RelativeTime iso={s.last_used_at} />
                  </td>
                  <td>
                    <ConfirmButton
                      label="End"
                      question={s.current ? 'End this session? This signs you out here.' : `End the session of ${deviceName(s.user_agent)}?`}
                      busyLabel="Ending…"
                      onConfirm={() => end(s)}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableFrame>
      )}
      <div className="row">
        <ConfirmButton label="Sign out everywhere" question="Sign out on every device, this one included?" busyLabel="Signing out…" onConfirm={signOutEverywhere} />
      </div>
    </section>
  );
}
