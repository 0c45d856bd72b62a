// Agent status from the age of the last heartbeat (contract §2): under 2 minutes online, 2 to 5 minutes
// (both included) stale, over 5 minutes offline, never seen unknown. Computed on read, never stored.
export type AgentStatus = 'online' | 'stale' | 'offline' | 'unknown';

export const ONLINE_BELOW_MS = 2 * 60 * 1000;
export const STALE_UP_TO_MS = 5 * 60 * 1000;

export function statusOf(lastHeartbeat: Date | null, now: Date): AgentStatus {
  if (!lastHeartbeat) return 'unknown';
  const age = now.getTime() - lastHeartbeat.getTime();
  if (age < ONLINE_BELOW_MS) return 'online';
  if (age <= STALE_UP_TO_MS) return 'stale';
  return 'offline';
}

/** The heartbeat-time window a status filter selects, as of `now` (for SQL). */
export function heartbeatWindow(status: Exclude<AgentStatus, 'unknown'>, now: Date): { after?: Date; atOrAfter?: Date; before?: Date; atOrBefore?: Date } {
  const onlineFrom = new Date(now.getTime() - ONLINE_BELOW_MS);
  const staleFrom = new Date(now.getTime() - STALE_UP_TO_MS);
  if (status === 'online') return { after: onlineFrom };
  if (status === 'stale') return { atOrAfter: staleFrom, atOrBefore: onlineFrom };
  return { before: staleFrom };
}
