// The signed-in session: the access token lives in memory and in this tab's sessionStorage (so a reload
// keeps it and closing the tab forgets it; never localStorage, never a cookie). When it expires or the
// server refuses it, the session ends with a message the sign-in page shows. The user's role and
// customers ride along so the console can hide what the server would refuse (auth/access.tsx).
import { useSyncExternalStore } from 'react';
import type { ApiItem } from './api-types';

export type Role = ApiItem<'/users'>['role'];

export interface Session {
  token: string;
  expiresAt: string;
  username: string;
  /**
   * From the sign-in answer. Absent in a session stored by an older console or started by a sign-in
   * path that does not pass them: the console then asks GET /auth/me (auth/access.tsx). A change of
   * role or customers ends the user's sessions on the server, so a stored value never goes stale.
   */
  role?: Role;
  /** The customers the user is limited to; null: every customer. */
  customerIds?: number[] | null;
}

interface State {
  session: Session | null;
  /** Why the last session ended, shown on the sign-in page. */
  notice: string | null;
}

const STORAGE_KEY = 'rmm.session';
const listeners = new Set<() => void>();
let state: State = { session: readStored(), notice: null };
let expiryTimer: ReturnType<typeof setTimeout> | undefined;
scheduleExpiry();

function readStored(): Session | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    const parsed = raw ? (JSON.parse(raw) as Session) : null;
    return parsed && Date.parse(parsed.expiresAt) > Date.now() ? parsed : null;
  } catch {
    return null;
  }
}

function set(next: State): void {
  state = next;
  if (next.session) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(next.session));
  else sessionStorage.removeItem(STORAGE_KEY);
  scheduleExpiry();
  for (const listener of listeners) listener();
}

function scheduleExpiry(): void {
  clearTimeout(expiryTimer);
  const session = state.session;
  if (!session) return;
  // setTimeout holds at most ~24.8 days; tokens live 8 hours.
  const ms = Math.min(Date.parse(session.expiresAt) - Date.now(), 2 ** 31 - 1);
  expiryTimer = setTimeout(() => endSession('Your session has expired. Please sign in again.'), Math.max(ms, 0));
}

export function startSession(session: Session): void {
  set({ session, notice: null });
}

/** Adds what was learned about the signed-in user (role, customers) to the session, if it is still the same. */
export function updateSession(token: string, change: Partial<Omit<Session, 'token'>>): void {
  if (state.session?.token !== token) return;
  set({ ...state, session: { ...state.session, ...change } });
}

export function endSession(notice: string | null = null): void {
  if (!state.session && notice === state.notice) return;
  set({ session: null, notice });
}

export function currentToken(): string | null {
  return state.session?.token ?? null;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useSessionState(): State {
  return useSyncExternalStore(subscribe, () => state);
}
