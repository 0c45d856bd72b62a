// /alert-rules (issue 31): list, create, read, replace and delete alert rules. HTTP only: the scope,
// params and channel rules live in the service.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callerOf } from '../../http/auth.js';
import { idParams, okSchema } from '../../http/common-schemas.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import type { AlertRuleService } from './alert-rules.service.js';
import { RULE_LIST, ruleBody, ruleListQuery, ruleSchema, toRuleDto } from './alert-rules.schemas.js';

const tags = ['alerts'];

const SCOPE_TEXT =
  'A rule covers every agent (customer_id and agent_id null: global), one customer’s agents (customer_id) or one agent (agent_id); ' +
  'not both (400). The customer must exist and the agent must be one the caller can see (else 404). A customer-scoped API key sees its ' +
  'customer’s rules, its agents’ rules and the global rules; global rules are read-only to it (403 on create, change or delete), ' +
  'and other customers’ rules do not exist for it (404).';

const RULE_TEXT =
  'params are checked against the kind and stored with every default applied (a bad field: 400 with details at `params.<field>`): ' +
  'agent_offline {minutes = 5, status = offline|stale} — minutes below the status threshold (2 for stale, 5 for offline) are stored as given ' +
  'but the rule fires at the threshold, since an agent is only stale or offline from then on; metric_threshold {metric, label?, operator, ' +
  'threshold, for_seconds = 300, recovery_threshold? (default threshold), recovery_seconds? (default for_seconds)}; certificate_expiry ' +
  '{days = 14}; task_failed {statuses = [error, completed_with_warning]}; backup_age {days = 7}; update_pending {hours = 24}; check_state {states = [critical] (warning, critical, unknown), policy_id?, check_id?, for_seconds = 300}: one alert per agent and check, fired once a check has been in one of the states for for_seconds, resolved when it leaves them. ' +
  'name 1–100 characters (trimmed); enabled defaults to true; reminder_minutes null (default, no reminders) or 5–10080. ' +
  'channel_ids: 0–20 channels, each existing, usable by the caller (a customer-scoped key: only its customer’s channels) and global or of the ' +
  'rule’s customer (the agent’s customer for an agent rule; a global rule: global channels only); otherwise 400 naming the channel.';

export const alertRuleRoutes: FastifyPluginAsyncZod<{ rules: AlertRuleService }> = async (app, { rules }) => {
  app.get(
    '/alert-rules',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Alert rules',
        description: listDescription(RULE_LIST, `${SCOPE_TEXT} Filters: customer_id (that customer’s rules and its agents’ rules), agent_id, kind, enabled. A new install has three default rules (agent offline 5 minutes, disk over 90 %, certificate expiring within 14 days): ordinary global rules, editable and deletable.`),
        tags,
        querystring: ruleListQuery,
        response: { 200: listResponse(ruleSchema, RULE_LIST) },
      },
    },
    async (request, reply) => {
      const { customer_id: customerId, agent_id: agentId, kind, enabled } = request.query;
      const caller = callerOf(request);
      return sendList(request, reply, RULE_LIST, { item: ruleSchema, dto: toRuleDto, fetch: (page) => rules.list(caller, { customerId, agentId, kind, enabled }, page) });
    },
  );

  app.post(
    '/alert-rules',
    {
      config: { access: 'write', audit: 'alert_rule.create' },
      schema: { summary: 'Create an alert rule', description: `${SCOPE_TEXT}\n\n${RULE_TEXT}`, tags, body: ruleBody, response: { 201: ruleSchema } },
    },
    async (request, reply) => reply.code(201).send(toRuleDto(await rules.create(callerOf(request), request.body))),
  );

  app.get(
    '/alert-rules/:id',
    { config: { access: 'read' }, schema: { summary: 'One alert rule', description: SCOPE_TEXT, tags, params: idParams, response: { 200: ruleSchema } } },
    async (request) => toRuleDto(await rules.get(callerOf(request), request.params.id)),
  );

  app.put(
    '/alert-rules/:id',
    {
      config: { access: 'write', audit: 'alert_rule.update' },
      schema: {
        summary: 'Replace an alert rule',
        description: `The whole rule, as for POST: fields left out take their defaults (channel_ids [], reminder_minutes null, enabled true, params defaults), customer_id and agent_id absent make it global. The kind cannot change (400). Evaluation picks the change up at once.\n\n${SCOPE_TEXT}\n\n${RULE_TEXT}`,
        tags,
        params: idParams,
        body: ruleBody,
        response: { 200: ruleSchema },
      },
    },
    async (request) => toRuleDto(await rules.update(callerOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/alert-rules/:id',
    {
      config: { access: 'write', audit: 'alert_rule.delete' },
      schema: {
        summary: 'Delete an alert rule',
        description: `Its open alerts are resolved first (by hand, in the caller’s name, so their resolution is notified); its history stays, named by the rule’s name and kind. ${SCOPE_TEXT}`,
        tags,
        params: idParams,
        response: { 200: okSchema },
      },
    },
    async (request) => {
      await rules.delete(callerOf(request), request.params.id);
      return { ok: true as const };
    },
  );
};
