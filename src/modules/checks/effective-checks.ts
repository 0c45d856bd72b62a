// An agent's effective set of checks: the enabled checks of every enabled policy that applies to it,
// with its overrides applied, and a version that names the set's content (the agent answers with it,
// and results name it). Pure, so the server computes thousands of sets from one load of the policies.
import { createHash } from 'node:crypto';
import type { AgentCheck } from './check-protocol.js';

export interface PolicyForAgents {
  id: number;
  name: string;
  enabled: boolean;
  customerIds: readonly number[];
  /** Lower-cased. */
  tags: readonly string[];
  platforms: readonly string[];
  checks: ReadonlyArray<PolicyCheck>;
}

export interface PolicyCheck {
  id: string;
  name: string;
  kind: AgentCheck['kind'];
  /** The stored params; a script check's library script is filled in by `resolveScript`. */
  params: Record<string, unknown>;
  intervalSeconds: number;
  timeoutSeconds: number;
  enabled: boolean;
}

export interface AgentForChecks {
  id: string;
  customerId: number | null;
  /** Lower-cased (agents.tag_keys). */
  tagKeys: readonly string[];
  platform: string | null;
}

export interface CheckOverride {
  checkId: string;
  excluded: boolean;
  params: Record<string, unknown>;
  intervalSeconds: number | null;
}

/** One check of an agent's set, with where it came from. */
export interface EffectiveCheck extends AgentCheck {
  policyId: number;
  policyName: string;
  overridden: boolean;
}

/** Whether a policy covers an agent: each non-empty list must match; a policy with none covers nobody. */
export function policyApplies(policy: PolicyForAgents, agent: AgentForChecks): boolean {
  if (!policy.enabled) return false;
  if (policy.customerIds.length === 0 && policy.tags.length === 0 && policy.platforms.length === 0) return false;
  if (policy.customerIds.length > 0 && (agent.customerId === null || !policy.customerIds.includes(agent.customerId))) return false;
  if (policy.tags.length > 0 && !policy.tags.some((t) => agent.tagKeys.includes(t))) return false;
  if (policy.platforms.length > 0 && (agent.platform === null || !policy.platforms.includes(agent.platform))) return false;
  return true;
}

export function effectiveChecks(
  policies: readonly PolicyForAgents[],
  agent: AgentForChecks,
  overrides: ReadonlyMap<string, CheckOverride>,
  resolveScript: (params: Record<string, unknown>) => Record<string, unknown>,
): EffectiveCheck[] {
  const checks: EffectiveCheck[] = [];
  for (const policy of policies) {
    if (!policyApplies(policy, agent)) continue;
    for (const check of policy.checks) {
      if (!check.enabled) continue;
      const override = overrides.get(check.id);
      if (override?.excluded) continue;
      const params = override ? { ...check.params, ...override.params } : check.params;
      checks.push({
        id: check.id,
        name: check.name,
        kind: check.kind,
        params: check.kind === 'script' ? resolveScript(params) : params,
        interval_seconds: override?.intervalSeconds ?? check.intervalSeconds,
        timeout_seconds: check.timeoutSeconds,
        policyId: policy.id,
        policyName: policy.name,
        overridden: override !== undefined,
      });
    }
  }
  return checks;
}

/** What the agent receives: the checks without their provenance. */
export function agentChecksOf(checks: readonly EffectiveCheck[]): AgentCheck[] {
  return checks.map(({ id, name, kind, params, interval_seconds, timeout_seconds }) => ({ id, name, kind, params, interval_seconds, timeout_seconds }));
}

/** The set's version: a hash of what the agent receives (the same set, the same version, on every instance). */
export function setVersion(checks: readonly AgentCheck[]): string {
  return createHash('sha256').update(JSON.stringify(checks)).digest('hex').slice(0, 24);
}
