import { z } from 'zod';
import { timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { newestFirstList, pageQuery } from '../../http/pagination.js';
import type { AuditEntryRow } from './audit.repo.js';

export const AUDIT_LIST = newestFirstList(100);

export const auditQuery = z.object({
  ...pageQuery(AUDIT_LIST),
  actor: z.string().min(1).max(200).optional().describe('Username, or the hint of an API key'),
  action: z.string().min(1).max(200).optional().describe('e.g. auth.login, auth.login_failed, customer.create'),
  from: timestampSchema.optional(),
  to: timestampSchema.optional(),
});

export const auditEntrySchema = z
  .object({
    id: z.number().int(),
    time: timestampSchema,
    actor_type: z.enum(['user', 'api_key']),
    actor: z.string(),
    action: z.string(),
    method: z.string(),
    path: z.string(),
    status_code: z.number().int(),
    ip: z.string(),
    target: z
      .string()
      .nullable()
      .describe('The object changed, named for people: "agent demo-3 (Bäckerei Sonnenschein GmbH)", "customer 10001 Bäckerei Sonnenschein GmbH", "user anna"; null when the request names none (e.g. a fleet-wide action) and for entries written before it was recorded'),
  })
  .meta({ id: 'AuditEntry' });

export function toAuditDto(e: AuditEntryRow): z.infer<typeof auditEntrySchema> {
  return {
    id: e.id,
    time: toTimestamp(e.time),
    actor_type: e.actor_type,
    actor: e.actor,
    action: e.action,
    method: e.method,
    path: e.path,
    status_code: e.status_code,
    ip: e.ip,
    target: e.target ?? null,
  };
}
