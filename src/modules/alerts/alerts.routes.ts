// Alerts (issue 31): GET /alerts (open first, then history, with filters), GET /alerts/summary (the
// console's badge), GET /alerts/{id}, POST /alerts/{id}/acknowledge, POST /alerts/{id}/resolve.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams, idSchema, timestampSchema, toTimestamp, withoutNul } from '../../http/common-schemas.js';
import { listDescription, listResponse, newestFirstList, pageQuery, sendList } from '../../http/pagination.js';
import { agentIdSchema } from '../agents/agents.schemas.js';
import { FLAPPING_LABEL } from './alert-engine.js';
import type { AlertView } from './alerts.repo.js';
import type { AlertService } from './alerts.service.js';

const tags = ['alerts'];
const ALERT_LIST = newestFirstList(100, 'open alerts first (firing, then acknowledged), then resolved ones; newest first within each');
const STATES = ['firing', 'acknowledged', 'resolved'] as const;

const alertSchema = z.object({
  id: z.number().int(),
  rule_id: z.number().int().nullable().describe('null once the rule was deleted'),
  rule_name: z.string(),
  kind: z.string().describe("The rule's kind, or `flapping` for the one notice about an agent that keeps changing state"),
  agent_id: z.string(),
  agent_name: z.string(),
  hostname: z.string(),
  customer_id: z.number().int().nullable(),
  label: z.string().describe('Mount point, interface, gateway, certificate or task; "" when the rule has none'),
  state: z.enum(STATES),
  suppressed: z.boolean().describe('Began inside a maintenance window or while the agent was flapping: notifies nobody, its resolution included'),
  summary: z.string().describe('What crossed which threshold since when'),
  value: z.number().nullable(),
  threshold: z.number().nullable(),
  since: timestampSchema.describe('When the condition began'),
  fired_at: timestampSchema,
  acknowledged_at: timestampSchema.nullable(),
  acknowledged_by: z.string().nullable(),
  ack_comment: z.string().nullable(),
  resolved_at: timestampSchema.nullable(),
  resolved_by: z.string().nullable().describe('Who resolved it by hand; null when its condition cleared'),
  resolve_comment: z.string().nullable(),
  delivery_error: z.string().nullable().describe('Set when a notification of this alert was given up after 10 tries'),
});

const commentBody = z.object({ comment: withoutNul(z.string().trim().max(1000)).optional() }).default({});

const alertDto = (a: AlertView) => ({
  id: a.id,
  rule_id: a.rule_id,
  rule_name: a.rule_name,
  kind: a.kind,
  agent_id: a.agent_id,
  agent_name: a.agent_name,
  hostname: a.hostname,
  customer_id: a.customer_id,
  label: a.label === FLAPPING_LABEL ? '' : a.label,
  state: a.state,
  suppressed: a.suppressed,
  summary: a.summary,
  value: a.value,
  threshold: a.threshold,
  since: toTimestamp(a.since),
  fired_at: toTimestamp(a.fired_at),
  acknowledged_at: toTimestamp(a.acknowledged_at),
  acknowledged_by: a.acknowledged_by,
  ack_comment: a.ack_comment,
  resolved_at: toTimestamp(a.resolved_at),
  resolved_by: a.resolved_by,
  resolve_comment: a.resolve_comment,
  delivery_error: a.delivery_error,
});

export const alertRoutes: FastifyPluginAsyncZod<{ alerts: AlertService }> = async (app, { alerts }) => {
  app.get(
    '/alerts',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Alerts: open ones first, then the history',
        description: listDescription(ALERT_LIST, '`state=open` selects firing and acknowledged alerts; `from`/`to` bound the firing time. A customer-scoped key sees its customer\'s agents\' alerts only.'),
        tags,
        querystring: z.object({
          state: z.enum(['open', ...STATES]).optional(),
          customer_id: idSchema.optional(),
          agent_id: agentIdSchema.optional(),
          rule_id: idSchema.optional(),
          from: timestampSchema.optional(),
          to: timestampSchema.optional(),
          ...pageQuery(ALERT_LIST),
        }),
        response: { 200: listResponse(alertSchema, ALERT_LIST) },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const filter = {
        state: q.state,
        customerId: q.customer_id,
        agentId: q.agent_id,
        ruleId: q.rule_id,
        from: q.from ? new Date(q.from) : undefined,
        to: q.to ? new Date(q.to) : undefined,
      };
      const caller = callerOf(request);
      return sendList(request, reply, ALERT_LIST, { item: alertSchema, dto: alertDto, fetch: (page) => alerts.list(caller, filter, page) });
    },
  );

  app.get(
    '/alerts/summary',
    {
      config: { access: 'read' },
      schema: {
        summary: 'How many alerts are open (the console badge)',
        tags,
        response: { 200: z.object({ open: z.number().int(), firing: z.number().int(), acknowledged: z.number().int() }) },
      },
    },
    async (request) => alerts.summary(callerOf(request)),
  );

  app.get('/alerts/:id', { config: { access: 'read' }, schema: { summary: 'One alert', tags, params: idParams, response: { 200: alertSchema } } }, async (request) =>
    alertDto(await alerts.get(callerOf(request), request.params.id)),
  );

  app.post(
    '/alerts/acknowledge',
    {
      config: { access: 'write', audit: 'alert.acknowledge' },
      schema: {
        summary: 'Acknowledge several firing alerts at once',
        description:
          'Each as POST /alerts/{id}/acknowledge, with the same comment. Alerts that are not firing, unknown, or outside the caller\'s customers are listed in `skipped` with the reason (404 and 409 of the single call); the others are acknowledged. At most 500 ids.',
        tags,
        body: z.object({ ids: z.array(z.number().int().positive()).min(1).max(500), comment: withoutNul(z.string().trim().max(1000)).optional() }).strict(),
        response: { 200: z.object({ acknowledged: z.array(z.number().int()), skipped: z.array(z.object({ id: z.number().int(), reason: z.string() })) }) },
      },
    },
    async (request) => alerts.acknowledgeMany(callerOf(request), request.body.ids, request.body.comment || null),
  );

  app.post(
    '/alerts/:id/acknowledge',
    {
      config: { access: 'write', audit: 'alert.acknowledge' },
      schema: {
        summary: 'Acknowledge a firing alert (someone is on it): no more reminders; it still resolves by itself',
        description: '409 when the alert is not firing (already acknowledged or resolved).',
        tags,
        params: idParams,
        body: commentBody,
        response: { 200: alertSchema },
      },
    },
    async (request) => alertDto(await alerts.acknowledge(callerOf(request), request.params.id, request.body.comment || null)),
  );

  app.post(
    '/alerts/:id/resolve',
    {
      config: { access: 'write', audit: 'alert.resolve' },
      schema: {
        summary: 'Resolve an open alert by hand; its channels hear of it like an automatic resolution',
        description: '409 when already resolved. If the condition still holds, a new alert fires once the rule finds it again (thresholds: after their duration anew).',
        tags,
        params: idParams,
        body: commentBody,
        response: { 200: alertSchema },
      },
    },
    async (request) => alertDto(await alerts.resolve(callerOf(request), request.params.id, request.body.comment || null)),
  );
};
