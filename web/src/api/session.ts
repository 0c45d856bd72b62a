// The signed-in session: the access token lives in memory and in this tab's sessionStorage (so a reload
// keeps it and closing the tab forgets it; never localStorage, never a cookie). When it expires or the
// server refuses it, the session ends with a message the sign-in page shows.
import { useSyncExternalStore } from 'react';

export interface Session {
  token: string;
  expiresAt: string;
  username: string;
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
