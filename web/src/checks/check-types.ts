// The API's shapes for checks and policies (issue 61), named once for the console, with the kinds a
// policy offers and a starting point for each kind's params (docs/checks.md, "Kinds").
import { allOf, type ApiBody, type ApiItem } from '../api/api-types';
import type { Badge } from '../ui/widgets';

export type Policy = ApiItem<'/check-policies'>;
export type PolicyCheck = Policy['checks'][number];
export type CheckKind = PolicyCheck['kind'];
export type AgentChecks = ApiBody<'/agents/{id}/checks'>;
export type AgentCheck = AgentChecks['checks'][number];
export type CheckState = NonNullable<AgentCheck['state']>;
export type FailingCheck = ApiItem<'/checks/failing'>;
export type CheckHistoryEntry = ApiItem<'/agents/{id}/checks/{check_id}/history'>;
export type CheckOverride = ApiItem<'/agents/{id}/check-overrides'>;
export type Platform = Policy['platforms'][number];

export const CHECK_KINDS = allOf<CheckKind>()(['service', 'process', 'http', 'tcp', 'ping', 'dns', 'disk', 'cpu', 'memory', 'script']);
export const PLATFORMS = allOf<Platform>()(['linux', 'windows', 'freebsd']);

export const KIND_LABELS: Record<CheckKind, string> = {
  ping: 'Ping',
  tcp: 'TCP port',
  http: 'HTTP(S)',
  dns: 'DNS name',
  service: 'Service',
  process: 'Process',
  disk: 'Disk',
  cpu: 'CPU',
  memory: 'Memory',
  script: 'Script or Nagios plugin',
};

/** An agent's check names its kind as text: a kind this console does not know yet shows as the server spells it. */
export const kindLabel = (kind: string): string => KIND_LABELS[kind as CheckKind] ?? kind;

/**
 * What a new check of each kind starts with: its required fields, and the thresholds most people set,
 * so the params box shows the field names the server expects rather than an empty object.
 */
export const PARAM_TEMPLATES: Record<CheckKind, Record<string, unknown>> = {
  ping: { host: '', warn_loss_percent: 20, crit_loss_percent: 100 },
  tcp: { host: '', port: 443 },
  http: { url: 'https://', warn_ms: 1000 },
  dns: { name: '' },
  service: { name: '' },
  process: { pattern: '', match: 'name', min: 1 },
  disk: { mount: '/', warn_percent: 85, crit_percent: 95 },
  cpu: { warn_percent: 90 },
  memory: { warn_percent: 90 },
  script: { command: '/usr/lib/nagios/plugins/check_tcp', args: [] },
};

type Tone = Parameters<typeof Badge>[0]['tone'];

/** Nagios' colours: OK good, WARNING warn, CRITICAL bad, UNKNOWN (and no result yet) muted. */
export const STATE_TONES: Record<CheckState, Tone> = { ok: 'good', warning: 'warn', critical: 'bad', unknown: 'muted' };
