// The health rule for a freshly started agent binary (issue 30). It passes when
// 1. its first heartbeat reaches the server within `timeoutMs` of the start,
// 2. from then on the server's last heartbeat keeps advancing, never standing still for more than
//    `gapMs`, and the service keeps running, for `windowMs`.
// A heartbeat counts only when it is newer than the last one before the start (`baseline`, server time
// on both sides, so the device's clock does not matter) and, when the heartbeat names the binary's
// SHA-256 (`agent_sha256`), only when that is the new binary's: an old binary started by someone else
// never counts. Time in which the server cannot be asked counts for nothing: the new binary keeps
// running, the wait is extended, and judging goes on once the server answers again.
// The rule's time runs from the binary's start, kept in the update record with the rest of the check's
// progress, so a restarted updater resumes with the time that is left instead of starting from zero
// (issue 57: killed four times, a 40 s timeout had let a silent binary run for 152 s).
import type { Clock } from '../../platform/clock.js';
import { reportedSha256, type AgentView } from './updater-api.js';
import type { ServiceControl } from './service-control.js';

export interface HealthRule {
  /** From the start to the first heartbeat. */
  timeoutMs: number;
  /** How long after its first heartbeat the binary must keep heartbeating and running. */
  windowMs: number;
  /** Longest time the server's last heartbeat may stand still within the window. */
  gapMs: number;
  /** How often the server and the service are looked at. */
  pollMs: number;
}

/**
 * Where a check stands, kept in the update record so that a restarted updater goes on from there
 * instead of from zero: the rule's time counts from the binary's start, less the time the server could
 * not be asked, whether or not the updater ran meanwhile.
 */
export interface CheckProgress {
  /** Device time (ms) the new binary was started. */
  since: number;
  /** Time since then in which the server could not be asked: it counts for nothing. */
  uncountedMs: number;
  /** Counted time at which its first heartbeat was seen; null before. */
  firstHeartbeatMs: number | null;
}

export interface HealthCheckDeps {
  getAgent(): Promise<AgentView>;
  service: ServiceControl;
  clock: Clock;
  signal: AbortSignal;
  log(line: string): void;
  /** Keeps the progress on disk; called when it changes (the first heartbeat, the end of an outage). */
  save(progress: CheckProgress): Promise<void>;
}

/** The progress as the update record keeps it; a record of an older updater counts from its start. */
export function progressOf(record: { started_at: string; check_started_at?: string; uncounted_ms?: number; first_heartbeat_ms?: number }): CheckProgress {
  return {
    since: Date.parse(record.check_started_at ?? record.started_at),
    uncountedMs: record.uncounted_ms ?? 0,
    firstHeartbeatMs: record.first_heartbeat_ms ?? null,
  };
}

/** What is left of the rule's time, for the log (a resumed check has used some of it). */
export function timeLeft(rule: HealthRule, progress: CheckProgress, now: number): string {
  const used = Math.max(0, now - progress.since - progress.uncountedMs);
  const s = (ms: number) => `${Math.round(Math.max(0, ms) / 1000)} s`;
  if (progress.firstHeartbeatMs !== null) {
    return `its health window of ${s(rule.windowMs)} has ${s(rule.windowMs - (used - progress.firstHeartbeatMs))} left`;
  }
  if (used === 0) return `its first heartbeat must reach the server within ${s(rule.timeoutMs)}`;
  if (used >= rule.timeoutMs) return `the ${s(rule.timeoutMs)} for its first heartbeat ran out while the updater was not running: it must have come already`;
  return `its first heartbeat must reach the server within ${s(rule.timeoutMs)} of its start, ${s(rule.timeoutMs - used)} from now`;
}

/** The new binary failed the rule; the message says which part. */
export class HealthFailure extends Error {}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * Resolves when the binary passed; throws HealthFailure when it failed, or the signal's reason when
 * aborted (the caller leaves the update record for the next start then). `progress` is updated in place.
 * A check resumed after its first-heartbeat deadline passed fails at the first answer from the server
 * unless that shows the new binary's heartbeat; one resumed within (or after) its window passes only
 * once the binary has heartbeated again since the resumption.
 */
export async function checkHealth(
  deps: HealthCheckDeps,
  rule: HealthRule,
  expected: { sha256: string; version: string; baseline: string | null },
  progress: CheckProgress,
): Promise<void> {
  const { service, clock, log, signal } = deps;
  const after = expected.baseline === null ? -Infinity : Date.parse(expected.baseline);
  // Clamped at zero: a device clock set back makes the counted time stand still, never negative.
  const counted = (now: number) => Math.max(0, now - progress.since - progress.uncountedMs);
  const healthyFor = (now: number) => counted(now) - (progress.firstHeartbeatMs ?? 0);
  // A resumed window: what the binary sent before the resumption proves nothing about it now.
  let lastSeen: number | null = progress.firstHeartbeatMs === null ? after : null; // latest counted heartbeat (server time)
  let alive = false; // a heartbeat of the new binary came while this run looked
  let lastAdvance = clock.now().getTime(); // device time the latest heartbeat was first seen
  let lastAnswered: number | null = null; // device time of the previous answered poll
  let outageSince: number | null = null;
  const save = async () => {
    try {
      await deps.save(progress);
    } catch (err) {
      // Lost progress only makes a restarted updater stricter (outage time counted) or slower (window again).
      log(`cannot keep the health check's progress in the update record (${(err as Error).message})`);
    }
  };

  for (;;) {
    if (!(await service.isRunning())) {
      const into = progress.firstHeartbeatMs === null ? '' : ` (it stopped ${seconds(healthyFor(clock.now().getTime()))} into the health window)`;
      throw new HealthFailure(`${service.description} is not running${into}`);
    }
    const now = clock.now().getTime();
    let agent: AgentView;
    try {
      agent = await deps.getAgent();
    } catch (err) {
      if (signal.aborted) throw err;
      if (outageSince === null) {
        outageSince = now;
        log(`cannot ask the server about firmware ${expected.version} (${(err as Error).message}); the new binary keeps running and the health check waits for the server`);
      }
      await clock.sleep(rule.pollMs, signal);
      continue;
    }
    if (outageSince !== null) {
      log(`the server answers again after ${seconds(now - outageSince)}; that time does not count, the health check goes on`);
      progress.uncountedMs += now - (lastAnswered ?? outageSince);
      outageSince = null;
      // The agent could not reach the server either: its silence meanwhile is not held against it.
      lastAdvance = now;
      await save();
    }
    lastAnswered = now;

    const heartbeat = agent.last_heartbeat === null ? null : Date.parse(agent.last_heartbeat);
    const sha = reportedSha256(agent);
    const fromNewBinary = heartbeat !== null && heartbeat > after && (sha === null || sha === expected.sha256);
    if (progress.firstHeartbeatMs === null) {
      if (fromNewBinary) {
        progress.firstHeartbeatMs = counted(now);
        lastSeen = heartbeat;
        lastAdvance = now;
        alive = true;
        await save();
        log(`first heartbeat from firmware ${expected.version}; it must keep heartbeating (no gap over ${seconds(rule.gapMs)}) for ${seconds(rule.windowMs)}`);
      } else if (counted(now) >= rule.timeoutMs) {
        const other = heartbeat !== null && heartbeat > after && sha !== null ? ` (the heartbeats that came report SHA-256 ${sha}, not the new binary's)` : '';
        throw new HealthFailure(`no heartbeat from the new binary within ${seconds(rule.timeoutMs)}${other}`);
      }
    } else {
      if (fromNewBinary && lastSeen === null) {
        lastSeen = heartbeat;
      } else if (fromNewBinary && heartbeat > lastSeen!) {
        lastSeen = heartbeat;
        lastAdvance = now;
        alive = true;
      } else if (now - lastAdvance > rule.gapMs) {
        throw new HealthFailure(`no heartbeat from the new binary for ${seconds(now - lastAdvance)} (more than ${seconds(rule.gapMs)}), ${seconds(healthyFor(now))} into the health window`);
      }
      if (alive && healthyFor(now) >= rule.windowMs) {
        if (!(await service.isRunning())) throw new HealthFailure(`${service.description} stopped running at the end of the health window`);
        return;
      }
    }
    await clock.sleep(rule.pollMs, signal);
  }
}
