// The console's shell: the sign-in page until there is a session, then the header and the page the
// path names.
import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { api } from './api/client';
import { endSession, useSessionState } from './api/session';
import { AccessGate, allows, useAccess, type Need } from './auth/access';
import { SignInPage } from './auth/sign-in-page';
import { AccountPage } from './account/account-page';
import { OpenAlertsBadge } from './alerts/alert-summary';
import { AgentsPage } from './agents/agents-page';
import { CustomerPage } from './customers/customer-page';
import { CustomersPage } from './customers/customers-page';
import { FleetPage } from './fleet/fleet-page';
import { AuditPage } from './audit/audit-page';
import { FirmwarePage } from './firmware/firmware-page';
import { KeysPage } from './keys/keys-page';
import { SettingsPage } from './settings/settings-page';
import { TaskPage } from './tasks/task-page';
import { TasksPage } from './tasks/tasks-page';
import { Link, match, usePath } from './router';
import { UsersPage } from './users/users-page';
import { pageTitle } from './ui/page-title';
import { Loading } from './ui/widgets';

// The agent page (charts, diff, panels) is most of the code: loaded when first opened, so the fleet
// page, where a technician starts, does not wait for it.
const AgentPage = lazy(() => import('./agent-detail/agent-page').then((m) => ({ default: m.AgentPage })));
// Alerting's pages (rules, channels, windows and their forms) are opened far less often than the fleet.
const AlertsPage = lazy(() => import('./alerts/alerts-page').then((m) => ({ default: m.AlertsPage })));
// xterm.js is as big again as the rest of the console: loaded when the terminal is first opened.
const TerminalPage = lazy(() => import('./terminal/terminal-page').then((m) => ({ default: m.TerminalPage })));
// Scripts, the command history and bulk actions (issue 33) are a technician's occasional tools.
const ScriptsPage = lazy(() => import('./scripts/scripts-page').then((m) => ({ default: m.ScriptsPage })));
const HistoryEntryPage = lazy(() => import('./history/history-entry-page').then((m) => ({ default: m.HistoryEntryPage })));
// Checks and policies (issue 61): the failing view and the policy editor.
const ChecksPage = lazy(() => import('./checks/checks-page').then((m) => ({ default: m.ChecksPage })));
const BulkPage = lazy(() => import('./bulk/bulk-page').then((m) => ({ default: m.BulkPage })));

interface Route {
  pattern: string;
  render: (params: Record<string, string>) => ReactNode;
  /** Pages the server would refuse to a user's role or customer limit: a short note instead. */
  need?: Need;
}

const ROUTES: Route[] = [
  { pattern: '/', render: () => <FleetPage /> },
  { pattern: '/agents', render: () => <AgentsPage /> },
  {
    pattern: '/alerts/:tab?',
    render: (p) => (
      <Suspense fallback={<Loading />}>
        <AlertsPage tab={p.tab ?? 'open'} />
      </Suspense>
    ),
  },
  {
    pattern: '/checks/:tab?',
    render: (p) => (
      <Suspense fallback={<Loading />}>
        <ChecksPage tab={p.tab ?? 'failing'} />
      </Suspense>
    ),
  },
  { pattern: '/customers', render: () => <CustomersPage /> },
  { pattern: '/customers/:id', render: (p) => <CustomerPage id={p.id ?? ''} /> },
  { pattern: '/tasks', render: () => <TasksPage /> },
  { pattern: '/tasks/:id', render: (p) => <TaskPage id={p.id ?? ''} /> },
  {
    pattern: '/scripts/history/:id',
    render: (p) => (
      <Suspense fallback={<Loading />}>
        <HistoryEntryPage id={p.id ?? ''} />
      </Suspense>
    ),
  },
  {
    pattern: '/scripts/:tab?',
    render: (p) => (
      <Suspense fallback={<Loading />}>
        <ScriptsPage tab={p.tab ?? 'library'} />
      </Suspense>
    ),
  },
  {
    pattern: '/bulk/:id',
    render: (p) => (
      <Suspense fallback={<Loading />}>
        <BulkPage id={p.id ?? ''} />
      </Suspense>
    ),
  },
  { pattern: '/firmware', render: () => <FirmwarePage /> },
  { pattern: '/audit', render: () => <AuditPage /> },
  { pattern: '/settings', render: () => <SettingsPage />, need: 'full-admin' },
  { pattern: '/users', render: () => <UsersPage />, need: 'full-admin' },
  { pattern: '/keys', render: () => <KeysPage /> },
  { pattern: '/account', render: () => <AccountPage /> },
  {
    pattern: '/terminal',
    render: () => (
      <Suspense fallback={<Loading />}>
        <TerminalPage />
      </Suspense>
    ),
    need: 'full-admin',
  },
  {
    pattern: '/agents/:id/:tab?',
    render: (p) => (
      <Suspense fallback={<Loading />}>
        <AgentPage id={p.id ?? ''} tab={p.tab ?? 'overview'} />
      </Suspense>
    ),
  },
];

export function App() {
  const { session, notice } = useSessionState();
  if (!session) return <SignInPage notice={notice} />;
  return (
    <AccessGate>
      <Console username={session.username} />
    </AccessGate>
  );
}

function Console({ username }: { username: string }) {
  const path = usePath();
  const access = useAccess();
  let page: ReactNode = <NotFound />;
  for (const route of ROUTES) {
    const params = match(route.pattern, path);
    if (params) {
      page = allows(access, route.need) ? route.render(params) : <NotYours />;
      break;
    }
  }
  return (
    <>
      <Header username={username} path={path} />
      <main className="page">{page}</main>
    </>
  );
}

const NAV: readonly { to: string; label: string }[] = [
  { to: '/', label: 'Fleet' },
  { to: '/agents', label: 'Agents' },
  { to: '/alerts', label: 'Alerts' },
  { to: '/checks', label: 'Checks' },
  { to: '/customers', label: 'Customers' },
  { to: '/tasks', label: 'Tasks' },
  { to: '/scripts', label: 'Scripts' },
  { to: '/firmware', label: 'Firmware' },
  { to: '/users', label: 'Users' },
  { to: '/keys', label: 'API keys' },
  { to: '/audit', label: 'Audit' },
  { to: '/terminal', label: 'Terminal' },
  { to: '/settings', label: 'Settings' },
];

function Header({ username, path }: { username: string; path: string }) {
  const access = useAccess();
  // A link shows when its page would: the route's `need` is the one place that says who may open it.
  const nav = NAV.filter((n) => allows(access, ROUTES.find((r) => match(r.pattern, n.to))?.need));
  // Agent pages name the agent and its tab themselves (agent-page.tsx); every other page its section.
  const current = NAV.find((n) => (n.to === '/' ? path === '/' : path.startsWith(n.to)));
  // Pages outside the navigation name themselves here ("RMM" alone said nothing in a row of tabs).
  const label = current?.label ?? (path === '/account' ? 'My account' : undefined);
  const agentPage = /^\/agents\/[^/]+/.test(path);
  useEffect(() => {
    if (!agentPage) document.title = pageTitle(label);
  }, [agentPage, label]);
  const signOut = async () => {
    // Ends this user's tokens on the server too; the page signs out even if the server is unreachable.
    await api('/auth/logout', { method: 'POST', body: {} }).catch(() => undefined);
    endSession('You have signed out.');
  };
  const section = current?.to;
  return (
    <header className="topbar">
      <Link to="/" className="brand">
        RMM
      </Link>
      <nav aria-label="Main">
        {nav.map((n) => (
          <Link key={n.to} to={n.to} aria-current={section === n.to ? 'page' : undefined}>
            {n.label}
            {n.to === '/alerts' && <OpenAlertsBadge />}
          </Link>
        ))}
        <a href="/docs" target="_blank" rel="noreferrer">
          API
        </a>
      </nav>
      <span className="spacer" />
      <Link to="/account" className="muted user" aria-current={path === '/account' ? 'page' : undefined}>
        {username}
      </Link>
      <button type="button" onClick={() => void signOut()}>
        Sign out
      </button>
    </header>
  );
}

function NotYours() {
  return (
    <section>
      <h1>Not available</h1>
      <p>Your account may not use this page. An administrator with access to every customer can.</p>
      <p>
        <Link to="/">Back to the fleet</Link>
      </p>
    </section>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        <Link to="/">Back to the fleet</Link>
      </p>
    </section>
  );
}
