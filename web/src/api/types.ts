// The API objects most pages share, named once (from the generated types: api-types.ts).
import { allOf, type ApiBody, type ApiItem } from './api-types';

export type Agent = ApiItem<'/agents'>;
/** The agent with its latest system data, exactly as the agent sent it (any shape: agents are not trusted). */
export type AgentDetail = ApiBody<'/agents/{id}'>;
export type Platform = NonNullable<Agent['platform']>;
export type AgentStatus = Agent['status'];
/** GET /agents/tags: a tag in use and how many agents carry it. */
export type AgentTag = ApiItem<'/agents/tags'>;
/** What the on-device updater last said about an update (POST /agents/{id}/updater-report). */
export type UpdaterReport = NonNullable<Agent['updater']>;
export type AgentEvent = ApiItem<'/agents/{id}/events'>;
export type Customer = ApiItem<'/customers'>;

/** The API's hostname of a pre-registered agent until it registers (the spec's German placeholder). */
export const PENDING_HOSTNAME = '(ausstehend)';

/** A hostname as the English console shows it: a pre-registered agent's placeholder reads "pending". */
export function hostnameText(hostname: string): string {
  return hostname === PENDING_HOSTNAME ? 'pending' : hostname;
}

export const PLATFORM_LABELS: Record<Platform, string> = { freebsd: 'Firewall', linux: 'Hypervisor', windows: 'Windows' };
export const STATUSES = allOf<AgentStatus>()(['online', 'stale', 'offline', 'unknown']);
