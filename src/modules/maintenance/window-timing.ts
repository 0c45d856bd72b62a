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

function cronOf(expression: string): Cron {
  // paused: never schedules a timer; only used to step through matches.
  return new Cron(expression, { timezone: 'UTC', paused: true });
}

/** Whether the window is open at `at`. A window with neither form (never stored) is never open. */
export function coversAt(w: WindowTiming, at: Date): boolean {
  if (w.cron !== null && w.duration_minutes !== null) {
    const match = cronOf(w.cron).nextRun(new Date(at.getTime() - w.duration_minutes * MINUTE_MS));
    return match !== null && match.getTime() <= at.getTime();
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
  if (w.cron !== null) return cronOf(w.cron).nextRun(now);
  if (w.starts_at !== null && w.starts_at.getTime() > now.getTime()) return w.starts_at;
  return null;
}
