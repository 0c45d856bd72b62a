// Software-update rule and inventory shapes (contract §3).
import { z } from 'zod';
import { timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import type { WauRuleRow } from './wau.service.js';

/**
 * winget package ids: letters, digits and `._+-`, plus the wildcard `*` winget-autoupdate understands
 * (`Mozilla.Firefox*`); 1 to 128 characters, not starting with `.` or `-`. Nothing else can reach the
 * line-per-id list files, so no id can inject a line or a comment there.
 */
export const PACKAGE_ID_PATTERN = /^(?![.-])[A-Za-z0-9._+*-]{1,128}$/;

const packageIdSchema = z
  .string()
  .trim()
  .regex(PACKAGE_ID_PATTERN, 'must be 1 to 128 of A-Z a-z 0-9 . _ + - * and not start with . or -')
  .describe('winget package id, e.g. `Mozilla.Firefox`; `*` is a wildcard (`Mozilla.Firefox*`). Unique per customer, ignoring case');

/** Rule ids are bigint identities; anything else in their place is a 400. */
const ruleIdSchema = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const wauActionSchema = z.enum(['allow', 'block']).describe('`allow`: listed in `included`; `block`: listed in `excluded`');

export const createRuleBody = z.object({
  action: wauActionSchema,
  package_id: packageIdSchema,
  display_name: z.string().trim().max(200).optional().describe('Shown to people; default (absent or empty): the package id'),
});

/** Which rule(s) to delete, in the JSON body or the query; when both name a field they must agree. */
export const deleteRuleSelector = z.object({
  id: ruleIdSchema.optional().describe('The rule id'),
  package_id: packageIdSchema.optional().describe('The package id (ignoring case)'),
});

/** Fastify hands a request without a body over as null. */
export const deleteRuleBody = deleteRuleSelector.nullish();

export const ruleSchema = z
  .object({
    id: z.number().int(),
    customer_id: z.number().int(),
    action: wauActionSchema,
    package_id: z.string(),
    display_name: z.string(),
    created_at: timestampSchema,
  })
  .meta({ id: 'WauRule' });

export const deletedCountSchema = z.object({ deleted: z.number().int().describe('Rules deleted (0 when none matched)') });

export const inventoryItemSchema = z
  .object({
    name: z.string(),
    publisher: z.string().describe('"" when the program names none'),
    agent_count: z.number().int().describe("The customer's Windows agents that have this program (any version)"),
    versions: z
      .array(z.object({ version: z.string().describe('"" when the program names none'), agent_count: z.number().int() }))
      .describe('Newest first (numeric-aware)'),
  })
  .meta({ id: 'WauInventoryItem' });

export function toRuleDto(r: WauRuleRow): z.infer<typeof ruleSchema> {
  return {
    id: r.id,
    customer_id: r.customer_id,
    action: r.action,
    package_id: r.package_id,
    display_name: r.display_name,
    created_at: toTimestamp(r.created_at),
  };
}
