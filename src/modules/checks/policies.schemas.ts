// Request and response shapes of check policies (issue 61). A check's params are checked against its
// kind's schema (check-protocol.ts) and stored with every default applied; a bad field is a 400 whose
// details name `checks.<n>.params.<field>`.
import { z } from 'zod';
import { idRefSchema, timestampSchema } from '../../http/common-schemas.js';
import { allByDefault } from '../../http/pagination.js';
import { CHECK_KINDS, checkParams, MAX_CHECKS_PER_POLICY, type CheckKind } from './check-protocol.js';

export const POLICY_LIST = allByDefault('by name (ignoring case), then id');

const PLATFORMS = ['freebsd', 'linux', 'windows'] as const;
const kindSchema = z.enum(CHECK_KINDS as [CheckKind, ...CheckKind[]]);

export const checkIdSchema = z.string().uuid().describe("A check's id (UUID), kept while the check is edited");

const checkInput = z
  .object({
    id: checkIdSchema.optional().describe("Keep an existing check's id (its states, history, overrides and perfdata follow it); absent: a new check"),
    name: z.string().trim().min(1).max(255),
    kind: kindSchema,
    params: z.record(z.string(), z.unknown()).default({}),
    interval_seconds: z.number().int().min(10).max(86_400).default(300),
    timeout_seconds: z.number().int().min(1).max(300).default(30),
    enabled: z.boolean().default(true),
  })
  .strict()
  .transform((check, ctx) => {
    const parsed = checkParams[check.kind].safeParse(check.params);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: ['params', ...issue.path] } as never);
      return z.NEVER;
    }
    const params = parsed.data as Record<string, unknown>;
    if (check.kind === 'script') {
      if ('script' in check.params) ctx.addIssue({ code: 'custom', path: ['params', 'script'], message: 'is filled in by the server from script_id' });
      // The agent runs it without a shell or a PATH lookup: an absolute path (POSIX, or a Windows drive).
      if (typeof params.command === 'string' && !/^(\/|[A-Za-z]:[\\/])/.test(params.command)) {
        ctx.addIssue({ code: 'custom', path: ['params', 'command'], message: 'must be an absolute path on the device, such as /usr/lib/nagios/plugins/check_tcp' });
      }
      if ((params.command === undefined) === (params.script_id === undefined)) {
        ctx.addIssue({ code: 'custom', path: ['params'], message: 'a script check needs exactly one of command (an executable on the device) and script_id (a script of the library)' });
      }
    }
    if (check.timeout_seconds > check.interval_seconds) ctx.addIssue({ code: 'custom', path: ['timeout_seconds'], message: 'must not exceed interval_seconds' });
    return { ...check, params };
  });
export type CheckInput = z.output<typeof checkInput>;

export const policyBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(1000).default(''),
    enabled: z.boolean().default(true),
    customer_ids: z.array(idRefSchema).max(100).default([]).describe('Customers whose agents it covers; empty: any customer'),
    tags: z.array(z.string().trim().min(1).max(64)).max(50).default([]).describe('Agents with any of these tags (ignoring case); empty: any tags'),
    platforms: z.array(z.enum(PLATFORMS)).max(3).default([]).describe('Agents of these platforms; empty: any platform'),
    checks: z
      .array(checkInput)
      .max(MAX_CHECKS_PER_POLICY, `A policy holds at most ${MAX_CHECKS_PER_POLICY} checks`)
      .default([])
      .refine((checks) => new Set(checks.flatMap((c) => (c.id ? [c.id] : []))).size === checks.filter((c) => c.id).length, 'two checks name the same id'),
  })
  .strict();
export type PolicyBody = z.output<typeof policyBody>;

export const policyCheckSchema = z.object({
  id: z.string(),
  name: z.string(),
  kind: kindSchema,
  params: z.record(z.string(), z.unknown()),
  interval_seconds: z.number().int(),
  timeout_seconds: z.number().int(),
  enabled: z.boolean(),
});

export const policySchema = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  customer_ids: z.array(z.number().int()),
  tags: z.array(z.string()),
  platforms: z.array(z.enum(PLATFORMS)),
  checks: z.array(policyCheckSchema),
  /** Agents it covers now (within the caller's view). */
  agent_count: z.number().int(),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});
export type PolicyDto = z.infer<typeof policySchema>;
