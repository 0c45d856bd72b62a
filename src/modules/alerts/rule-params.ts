// What each kind of alert rule is configured with (issue 31), as zod schemas with the defaults applied:
// the API validates a rule's params with them and the evaluators read params only through them, so a
// stored rule always has every field its kind needs.
import { z } from 'zod';
import type { AlertRuleKind } from '../../db/schema.js';
import { HEARTBEAT_METRIC_NAMES } from '../metrics/extract-samples.js';

export const RULE_KINDS = ['agent_offline', 'metric_threshold', 'certificate_expiry', 'task_failed', 'backup_age', 'update_pending', 'check_state'] as const satisfies readonly AlertRuleKind[];

export const THRESHOLD_OPERATORS = ['>', '>=', '<', '<='] as const;
export type ThresholdOperator = (typeof THRESHOLD_OPERATORS)[number];

const DAY_SECONDS = 86_400;

export const agentOfflineParams = z.strictObject({
  minutes: z.number().int().min(1).max(10_080).default(5).describe('Minutes since the last heartbeat (at least the status threshold: 2 for stale, 5 for offline)'),
  status: z.enum(['offline', 'stale']).default('offline').describe('offline: over 5 minutes without a heartbeat; stale: over 2 (stale or offline)'),
});

export const metricThresholdParams = z
  .strictObject({
    // Thresholds are judged on heartbeats' samples as they arrive; checks' perfdata is not among them.
    metric: z.enum(HEARTBEAT_METRIC_NAMES),
    label: z.string().min(1).max(255).optional().describe('Only this mount point, interface or gateway (default: each label separately)'),
    operator: z.enum(THRESHOLD_OPERATORS),
    threshold: z.number().finite(),
    for_seconds: z.number().int().min(0).max(DAY_SECONDS).default(300).describe('How long every sample must cross the threshold before it fires'),
    recovery_threshold: z.number().finite().optional().describe('Resolves only once samples are back past this (default: the threshold); e.g. fire above 90, resolve below 80'),
    recovery_seconds: z.number().int().min(0).max(DAY_SECONDS).optional().describe('How long samples must stay past the recovery threshold (default: for_seconds)'),
  })
  .superRefine((p, ctx) => {
    if (p.recovery_threshold === undefined) return;
    const above = p.operator === '>' || p.operator === '>=';
    if (above ? p.recovery_threshold > p.threshold : p.recovery_threshold < p.threshold) {
      ctx.addIssue({ code: 'custom', path: ['recovery_threshold'], message: `must be ${above ? 'at or below' : 'at or above'} the threshold for operator ${p.operator}` });
    }
  });

export const certificateExpiryParams = z.strictObject({
  days: z.number().int().min(1).max(365).default(14).describe('Fires when a certificate in use expires within this many days (or has expired)'),
});

export const taskFailedParams = z.strictObject({
  statuses: z
    .array(z.enum(['error', 'completed_with_warning']))
    .min(1)
    .default(['error', 'completed_with_warning'])
    .describe('Run outcomes that fire; a later run of the same task that completes resolves it'),
});

export const backupAgeParams = z.strictObject({
  days: z.number().int().min(1).max(365).default(7).describe('Fires when the newest configuration backup is older (firewalls and agents that have had one)'),
});

export const updatePendingParams = z.strictObject({
  hours: z.number().int().min(1).max(8_760).default(24).describe('Fires when a requested update has not been applied (flag still set) after this many hours'),
});

export const checkStateParams = z.strictObject({
  states: z
    .array(z.enum(['warning', 'critical', 'unknown']))
    .min(1)
    .default(['critical'])
    .describe('Check states that fire; a check back in another state (OK) resolves its alert'),
  policy_id: z.number().int().min(1).optional().describe("Only this policy's checks (default: every check)"),
  check_id: z.string().min(1).max(64).optional().describe('Only this check'),
  for_seconds: z.number().int().min(0).max(DAY_SECONDS).default(300).describe('How long the check must have been in one of the states before it fires'),
});

export const RULE_PARAMS = {
  agent_offline: agentOfflineParams,
  metric_threshold: metricThresholdParams,
  certificate_expiry: certificateExpiryParams,
  task_failed: taskFailedParams,
  backup_age: backupAgeParams,
  update_pending: updatePendingParams,
  check_state: checkStateParams,
} as const satisfies Record<AlertRuleKind, z.ZodType>;

export type RuleParams = { [K in AlertRuleKind]: z.output<(typeof RULE_PARAMS)[K]> };
export type MetricThresholdParams = RuleParams['metric_threshold'];

/** The params of a stored rule with defaults applied; throws (ZodError) when they do not fit the kind. */
export function parseRuleParams<K extends AlertRuleKind>(kind: K, params: unknown): RuleParams[K] {
  return RULE_PARAMS[kind].parse(params ?? {}) as RuleParams[K];
}

/** Whether a value crosses the rule's threshold. */
export function breaches(p: MetricThresholdParams, value: number): boolean {
  return compare(p.operator, value, p.threshold);
}

/**
 * Whether a value is back past the recovery threshold: strictly beyond it ("clears below 80" means
 * under 80), or, without one, simply no longer crossing the threshold.
 */
export function recovered(p: MetricThresholdParams, value: number): boolean {
  if (p.recovery_threshold === undefined) return !breaches(p, value);
  return p.operator === '>' || p.operator === '>=' ? value < p.recovery_threshold : value > p.recovery_threshold;
}

function compare(op: ThresholdOperator, value: number, threshold: number): boolean {
  switch (op) {
    case '>':
      return value > threshold;
    case '>=':
      return value >= threshold;
    case '<':
      return value < threshold;
    case '<=':
      return value <= threshold;
  }
}
