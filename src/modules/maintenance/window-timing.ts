// When a maintenance window is open (issue 31), as pure functions of the window and a time, so the
// rules are unit-tested without a database and the engine can ask for thousands of agents per pass.
// A one-off window covers [starts_at, ends_at). A recurring one covers [m, m + duration_minutes) for
// every match m of its five-field UTC cron expression; a time is covered when some match lies in
// (at − duration, at], and the first match after at − duration (croner, strictly after) is the one to
// look at: if it is not after `at`, the time is inside that occurrence.
import { Cron } from 'croner';

export interface WindowTiming {
  starts_at: Date | null;
  ends_at: Date | null;
  cron: string | null;
  duration_minutes: number | null;
}

const MINUTE_MS = 60_000;

/** The window that covers an agent, as the engine needs it. */
export interface CoveringWindow {
  id: number;
  name: string;
}

/** Which window covers an agent at the time the matcher was made for. */
export interface WindowMatcher {
  covers(agent: { id: string; customer_id: number | null }): CoveringWindow | null;
}

/** A scoped window: its agent, its customer, or neither (every agent). */
export interface ScopedWindow extends WindowTiming, CoveringWindow {
  customer_id: number | null;
  agent_id: string | null;
}

function cronOf(expression: string): Cron | null {
  try {
    // paused: never schedules a timer; only used to step through matches.
    return new Cron(expression, { timezone: 'UTC', paused: true });
  } catch {
    // Checked on save; an expression a later croner refuses makes the window inert, not the pass fail.
    return null;
  }
}

/** Whether the window is open at `at`. A window with neither form (never stored) is never open. */
export function coversAt(w: WindowTiming, at: Date): boolean {
  if (w.cron !== null && w.duration_minutes !== null) {
    const match = cronOf(w.cron)?.nextRun(new Date(at.getTime() - w.duration_minutes * MINUTE_MS));
    return match != null && match.getTime() <= at.getTime();
  }
  if (w.starts_at !== null && w.ends_at !== null) {
    return w.starts_at.getTime() <= at.getTime() && at.getTime() < w.ends_at.getTime();
  }
  return false;
}

/**
 * The next time the window opens after `now`: the next cron match (strictly after now), or, for a
 * one-off, starts_at while it is still ahead, else null.
 */
export function nextStart(w: WindowTiming, now: Date): Date | null {
  if (w.cron !== null) return cronOf(w.cron)?.nextRun(now) ?? null;
  if (w.starts_at !== null && w.starts_at.getTime() > now.getTime()) return w.starts_at;
  return null;
}

/**
 * A matcher over `windows` at `at`: each window's timing is decided once here, so asking for each of
 * 10,000 agents is three map lookups. The agent's own window wins over its customer's, which wins over
 * a global one; among several of one kind, the lowest id (the order given).
 */
export function matcherAt(windows: readonly ScopedWindow[], at: Date): WindowMatcher {
  const byAgent = new Map<string, CoveringWindow>();
  const byCustomer = new Map<number, CoveringWindow>();
  let global: CoveringWindow | null = null;
  for (const w of windows) {
    if (!coversAt(w, at)) continue;
    const hit = { id: w.id, name: w.name };
    if (w.agent_id !== null) {
      if (!byAgent.has(w.agent_id)) byAgent.set(w.agent_id, hit);
    } else if (w.customer_id !== null) {
      if (!byCustomer.has(w.customer_id)) byCustomer.set(w.customer_id, hit);
    } else {
      global ??= hit;
    }
  }
  return {
    covers: (agent) => byAgent.get(agent.id) ?? (agent.customer_id === null ? undefined : byCustomer.get(agent.customer_id)) ?? global,
  };
}
