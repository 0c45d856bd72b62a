// What the signed-in user may do, so the console offers only that (issue 35). The server decides
// (src/modules/auth/access-policy.ts and each route's x-access); this mirrors its ladder only to hide
// controls the server would refuse, never to protect anything.
//
// Controls are wrapped in <Allowed need="…"> (or ask useAccess() where a column or a tab depends on
// it), so a control the user may not use is not rendered at all: not in the page, not in the tab
// order, not a request that would be refused. Grepping for `need=` finds every guarded control.
import { useEffect, useState, type ReactNode } from 'react';
import type { ApiBody } from '../api/api-types';
import { api } from '../api/client';
import { updateSession, useSessionState, type Role } from '../api/session';
import { ErrorBanner, Loading } from '../ui/widgets';

export interface Access {
  role: Role;
  /** A write or admin user: changes things of their customers (commands, tasks, backups, keys…). */
  canWrite: boolean;
  isAdmin: boolean;
  /** An admin with every customer: manages users and settings, opens the server's terminal. */
  fullAdmin: boolean;
  /** Limited to some customers: sees only theirs, and nothing server-wide. */
  scoped: boolean;
  customerIds: number[] | null;
}

/**
 * - `write`: changes within the user's customers (write and admin users).
 * - `server-wide`: changes that reach every customer: firmware and installer uploads, new customers,
 *   the script library (write and admin users with every customer).
 * - `full-admin`: users, settings and the server's terminal (admins with every customer).
 */
export type Need = 'write' | 'server-wide' | 'full-admin';

export function accessOf(role: Role, customerIds: number[] | null): Access {
  const canWrite = role !== 'read';
  const isAdmin = role === 'admin';
  const scoped = customerIds !== null;
  return { role, canWrite, isAdmin, scoped, customerIds, fullAdmin: isAdmin && !scoped };
}

export function allows(access: Access, need: Need | undefined): boolean {
  if (need === 'write') return access.canWrite;
  if (need === 'server-wide') return access.canWrite && !access.scoped;
  if (need === 'full-admin') return access.fullAdmin;
  return true;
}

export function useAccess(): Access {
  const session = useSessionState().session;
  // AccessGate shows no page before the role is known; should one render anyway, it gets the least.
  return accessOf(session?.role ?? 'read', session?.customerIds === undefined ? [] : session.customerIds);
}

/** Its children when the signed-in user may do what they need, otherwise `fallback` (nothing). */
export function Allowed({ need, children, fallback = null }: { need: Need; children: ReactNode; fallback?: ReactNode }) {
  return <>{allows(useAccess(), need) ? children : fallback}</>;
}

/** GET /auth/me for a signed-in user. */
type Me = Extract<ApiBody<'/auth/me'>, { username: string }>;

/**
 * Shows its children once the session knows the user's role and customers. A session that came
 * without them (stored by an older console, or begun by a sign-in that did not pass them) asks
 * GET /auth/me first.
 */
export function AccessGate({ children }: { children: ReactNode }) {
  const session = useSessionState().session;
  const token = session?.token;
  const known = session?.role !== undefined;
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (!token || known) return;
    const controller = new AbortController();
    api<Me>('/auth/me', { signal: controller.signal })
      .then((me) => updateSession(token, { role: me.role, customerIds: me.customer_ids }))
      .catch((err: unknown) => {
        if (!controller.signal.aborted) setError(err);
      });
    return () => controller.abort();
  }, [token, known]);
  if (known) return <>{children}</>;
  return <main className="page">{error ? <ErrorBanner error={error} /> : <Loading />}</main>;
}
