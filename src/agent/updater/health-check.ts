// The health rule for a freshly started agent binary (issue 30). It passes when
// 1. its first heartbeat reaches the server within `timeoutMs` of the start,
// 2. from then on the server's last heartbeat keeps advancing, never standing still for more than
//    `gapMs`, and the service keeps running, for `windowMs`.
// A heartbeat counts only when it is newer than the last one before the start (`baseline`, server time
// on both sides, so the device's clock does not matter) and, when the heartbeat names the binary's
// SHA-256 (`agent_sha256`), only when that is the new binary's: an old binary started by someone else
// never counts. Time in which the server cannot be asked counts for nothing: the new binary keeps
// running, the wait is extended, and judging goes on once the server answers again.
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

export interface HealthCheckDeps {
  getAgent(): Promise<AgentView>;
  service: ServiceControl;
  clock: Clock;
  signal: AbortSignal;
  log(line: string): void;
}

/** The new binary failed the rule; the message says which part. */
export class HealthFailure extends Error {}

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;

/**
 * Resolves when the binary passed; throws HealthFailure when it failed, or the signal's reason when
 * aborted (the caller leaves the update record for the next start then).
 */
export async function checkHealth(deps: HealthCheckDeps, rule: HealthRule, expected: { sha256: string; version: string; baseline: string | null }): Promise<void> {
  const { service, clock, log, signal } = deps;
  const after = expected.baseline === null ? -Infinity : Date.parse(expected.baseline);
  let waited = 0; // towards the first heartbeat, counted only while the server answers
  let healthy = 0; // of the window, the same
  let firstSeen = false;
  let lastSeen: number | null = null; // the latest counted heartbeat (server time)
  let lastAdvance = 0; // device time it was first seen
  let previousPoll: number | null = null; // device time of the previous answered poll
  let outageSince: number | null = null;

  for (;;) {
    if (!(await service.isRunning())) {
      throw new HealthFailure(`${service.description} is not running${firstSeen ? ` (it stopped ${seconds(healthy)} into the health window)` : ''}`);
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
      previousPoll = null;
      await clock.sleep(rule.pollMs, signal);
      continue;
    }
    if (outageSince !== null) {
      log(`the server answers again after ${seconds(now - outageSince)}; that time does not count, the health check goes on`);
      outageSince = null;
      // The agent could not reach the server either: its silence meanwhile is not held against it.
      lastAdvance = now;
    }
    const elapsed = previousPoll === null ? 0 : now - previousPoll;
    previousPoll = now;

    const heartbeat = agent.last_heartbeat === null ? null : Date.parse(agent.last_heartbeat);
    const sha = reportedSha256(agent);
    const fromNewBinary = heartbeat !== null && heartbeat > after && (sha === null || sha === expected.sha256);
    if (!firstSeen) {
      waited += elapsed;
      if (fromNewBinary) {
        firstSeen = true;
        lastSeen = heartbeat;
        lastAdvance = now;
        log(`first heartbeat from firmware ${expected.version}; it must keep heartbeating (no gap over ${seconds(rule.gapMs)}) for ${seconds(rule.windowMs)}`);
      } else if (waited >= rule.timeoutMs) {
        const other = heartbeat !== null && heartbeat > after && sha !== null ? ` (the heartbeats that came report SHA-256 ${sha}, not the new binary's)` : '';
        throw new HealthFailure(`no heartbeat from the new binary within ${seconds(rule.timeoutMs)}${other}`);
      }
    } else {
      healthy += elapsed;
      if (fromNewBinary && heartbeat > lastSeen!) {
        lastSeen = heartbeat;
        lastAdvance = now;
      } else if (now - lastAdvance > rule.gapMs) {
        throw new HealthFailure(`no heartbeat from the new binary for ${seconds(now - lastAdvance)} (more than ${seconds(rule.gapMs)}), ${seconds(healthy)} into the health window`);
      }
      if (healthy >= rule.windowMs) {
        if (!(await service.isRunning())) throw new HealthFailure(`${service.description} stopped running at the end of the health window`);
        return;
      }
    }
    await clock.sleep(rule.pollMs, signal);
  }
}
