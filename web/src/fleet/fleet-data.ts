// What the fleet page loads: every agent (for the counts), the attention list, recent events. Each is
// loaded and shown on its own, so the counts (one cheap list) are not held back by the attention list,
// which reads every agent's system data; the page refreshes all three every 30 s.
import type { ApiItem } from '../api/api-types';
import { api } from '../api/client';
import { STATUSES, type Agent, type AgentEvent, type AgentStatus, type Platform } from '../api/types';

export type AttentionItem = ApiItem<'/agents/attention'>;

export interface LoadedAgents {
  agents: Agent[];
  loadedAt: number;
}

export async function loadAgents(signal: AbortSignal): Promise<LoadedAgents> {
  return { agents: await api<Agent[]>('/agents', { signal }), loadedAt: Date.now() };
}

export function loadAttention(signal: AbortSignal): Promise<AttentionItem[]> {
  return api<AttentionItem[]>('/agents/attention', { signal });
}

export function loadRecentEvents(signal: AbortSignal): Promise<AgentEvent[]> {
  return api<AgentEvent[]>('/agents/events', { signal, query: { limit: 15 } });
}

export type StatusCounts = Record<AgentStatus, number>;

export function countByStatus(agents: readonly Agent[]): StatusCounts {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as StatusCounts;
  for (const agent of agents) counts[agent.status]++;
  return counts;
}

/** Per platform (null: never reported one), how many agents in each status. */
export function countByPlatform(agents: readonly Agent[]): Array<{ platform: Platform | null; total: number; counts: StatusCounts }> {
  const groups = new Map<Platform | null, Agent[]>();
  for (const agent of agents) groups.set(agent.platform, [...(groups.get(agent.platform) ?? []), agent]);
  const order: Array<Platform | null> = ['freebsd', 'linux', 'windows', null];
  return order.filter((p) => groups.has(p)).map((platform) => {
    const list = groups.get(platform) ?? [];
    return { platform, total: list.length, counts: countByStatus(list) };
  });
}
