// GET /agents/attention: the fleet page's "needs attention" list (see attention.service.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { allByDefault, listDescription, listResponse, pageQuery, sendList } from '../../http/pagination.js';
import { agentSchema } from '../agents/agents.schemas.js';
import { ATTENTION_KINDS, type AttentionItem, type AttentionService } from './attention.service.js';

const ATTENTION_LIST = allByDefault('by agent name in natural order (ignoring case, digit runs by number: demo-2 before demo-10), then agent id');

const query = z.object({
  ...pageQuery(ATTENTION_LIST),
  certificate_days: z.coerce
    .number()
    .int()
    .min(1)
    .max(365)
    .default(30)
    .describe('Certificates expiring within this many days count (default 30, 1 to 365)'),
  disk_percent: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(90)
    .describe('Disks filled to at least this percent count as nearly full (default 90, 1 to 100)'),
});

const reasonSchema = z.object({
  kind: z.enum(ATTENTION_KINDS).describe('Most severe first in this list: offline, stale, certificate_expired, certificate_expiring, disk_full, updates_available'),
  message: z.string(),
  valid_to: timestampSchema.optional().describe('Certificates only: the expiry the agent reported'),
  packages: z.number().int().optional().describe('updates_available only: how many packages wait, when the agent listed them'),
  mount: z.string().optional().describe('disk_full only: the mount point'),
  used_percent: z.number().optional().describe('disk_full only: how full the disk is, in whole percent'),
});

const itemSchema = z
  .object({
    agent: agentSchema.pick({ id: true, name: true, hostname: true, platform: true, customer_id: true, status: true, last_heartbeat: true }),
    reasons: z.array(reasonSchema).min(1),
  })
  .meta({ id: 'AttentionItem' });

function toItemDto({ agent, reasons }: AttentionItem): z.infer<typeof itemSchema> {
  return {
    agent: {
      id: agent.id,
      name: agent.name,
      hostname: agent.hostname,
      platform: agent.platform,
      customer_id: agent.customer_id,
      status: agent.status,
      last_heartbeat: toTimestamp(agent.last_heartbeat),
    },
    reasons,
  };
}

export const attentionRoutes: FastifyPluginAsyncZod<{ attention: AttentionService }> = async (app, { attention }) => {
  app.get(
    '/agents/attention',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Agents needing attention: offline, stale, certificates expiring, disks nearly full, updates available',
        description:
          'Reads each agent\'s latest system data: `updates.available` (true) with `updates.packages[]`, and ' +
          '`certificates[] {name, valid_to, in_use}` (certificates with `in_use: false` are left out), and ' +
          '`disks[] {mount, used_percent}` (else `used_bytes / total_bytes`). ' +
          'Agents without a reason are not listed.\n\n' +
          listDescription(ATTENTION_LIST),
        tags: ['agents'],
        querystring: query,
        response: { 200: listResponse(itemSchema, ATTENTION_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, ATTENTION_LIST, { item: itemSchema, dto: toItemDto, fetch: (page) => attention.list(caller, { certificateDays: request.query.certificate_days, diskPercent: request.query.disk_percent }, page) });
    },
  );
};
