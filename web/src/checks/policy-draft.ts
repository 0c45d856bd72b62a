// A policy as the form edits it (text where the user types) and back to the body the API takes. Params
// are edited as JSON text: ten kinds with up to eight fields each are one box whose field names are the
// API's (docs/checks.md), and the server checks them against the kind, naming the field it refuses.
import type { ApiRequest } from '../api/api-types';
import { ApiError } from '../api/client';
import { PARAM_TEMPLATES, type CheckKind, type Platform, type Policy, type PolicyCheck } from './check-types';

export interface CheckDraft {
  /** React's key: stable while checks are added and removed above it. */
  key: string;
  /** The stored check's id: kept on save, so its states, history and overrides stay with it. */
  id: string | undefined;
  name: string;
  kind: CheckKind;
  paramsText: string;
  interval: string;
  timeout: string;
  enabled: boolean;
}

export interface PolicyDraft {
  name: string;
  description: string;
  enabled: boolean;
  customerIds: number[];
  tags: string;
  platforms: Platform[];
  checks: CheckDraft[];
}

export type PolicyBody = ApiRequest<'/check-policies', 'post'>;

let nextKey = 0;
const newKey = () => `check-${++nextKey}`;

export const paramsTextOf = (params: Record<string, unknown>) => JSON.stringify(params, null, 2);

export function newCheckDraft(kind: CheckKind = 'service'): CheckDraft {
  return { key: newKey(), id: undefined, name: '', kind, paramsText: paramsTextOf(PARAM_TEMPLATES[kind]), interval: '300', timeout: '30', enabled: true };
}

function checkDraftOf(check: PolicyCheck): CheckDraft {
  return {
    key: newKey(),
    id: check.id,
    name: check.name,
    kind: check.kind,
    paramsText: paramsTextOf(check.params),
    interval: String(check.interval_seconds),
    timeout: String(check.timeout_seconds),
    enabled: check.enabled,
  };
}

export function policyDraftOf(policy: Policy | null): PolicyDraft {
  if (!policy) return { name: '', description: '', enabled: true, customerIds: [], tags: '', platforms: [], checks: [newCheckDraft()] };
  return {
    name: policy.name,
    description: policy.description,
    enabled: policy.enabled,
    customerIds: policy.customer_ids,
    tags: policy.tags.join(', '),
    platforms: policy.platforms,
    checks: policy.checks.map(checkDraftOf),
  };
}

/**
 * Params text that is not a JSON object never reaches the server: the same kind of error it would
 * answer (a 400 with the field's path), so the form shows it where the server's own errors go.
 */
function parseOne(text: string): { value: Record<string, unknown>; error?: string } {
  try {
    const value: unknown = JSON.parse(text.trim() || '{}');
    if (value && typeof value === 'object' && !Array.isArray(value)) return { value: value as Record<string, unknown> };
    return { value: {}, error: 'must be a JSON object, such as {"name": "nginx"}' };
  } catch (err) {
    return { value: {}, error: `is not valid JSON: ${(err as Error).message}` };
  }
}

const invalidParams = (details: { path: string; message: string }[]) => new ApiError(400, 'VALIDATION_ERROR', 'Some params are not valid JSON: see the fields marked.', undefined, details);

/** One params box's object (empty text: none), or the 400-like error naming `path`. */
export function parseParamsText(text: string, path: string): Record<string, unknown> {
  return parseAll([{ text, path }])[0]!;
}

function parseAll(boxes: ReadonlyArray<{ text: string; path: string }>): Array<Record<string, unknown>> {
  const results = boxes.map((b) => ({ box: b, ...parseOne(b.text) }));
  const details = results.flatMap((r) => (r.error ? [{ path: r.box.path, message: r.error }] : []));
  if (details.length > 0) throw invalidParams(details);
  return results.map((r) => r.value);
}

export function policyBodyOf(draft: PolicyDraft): PolicyBody {
  const params = parseAll(draft.checks.map((c, i) => ({ text: c.paramsText, path: `checks.${i}.params` })));
  return {
    name: draft.name.trim(),
    description: draft.description,
    enabled: draft.enabled,
    customer_ids: draft.customerIds,
    tags: draft.tags.split(',').map((t) => t.trim()).filter(Boolean),
    platforms: draft.platforms,
    checks: draft.checks.map((c, i) => ({
      ...(c.id ? { id: c.id } : {}),
      name: c.name.trim(),
      kind: c.kind,
      params: params[i]!,
      interval_seconds: Number(c.interval),
      timeout_seconds: Number(c.timeout),
      enabled: c.enabled,
    })),
  };
}
