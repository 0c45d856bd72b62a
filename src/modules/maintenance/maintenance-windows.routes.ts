// /maintenance-windows (issue 31): list, create, read, replace and delete maintenance windows. HTTP
// only: the timing and scope rules live in the service.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams, okSchema } from '../../http/common-schemas.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import type { MaintenanceWindowInput, MaintenanceWindowService } from './maintenance-windows.service.js';
import { WINDOW_LIST, toWindowDto, windowBody, windowListQuery, windowSchema } from './maintenance-windows.schemas.js';

const tags = ['alerts'];

const WINDOW_TEXT =
  'Alerts that begin while a window covers their agent are recorded as suppressed and notify nobody, their resolution included. ' +
  'A window covers every agent (customer_id and agent_id null: global), one customer’s agents (customer_id) or one agent (agent_id); not both (400). ' +
  'The customer must exist and the agent must be one the caller can see (else 404). A customer-scoped API key sees its customer’s windows, its ' +
  'agents’ windows and the global ones; global windows are read-only to it (403 on create, change or delete), other customers’ windows do not ' +
  'exist for it (404).';

const TIMING_TEXT =
  'Exactly one form, else 400: one-off, starts_at and ends_at (after starts_at), open from starts_at up to but not including ends_at; or recurring, ' +
  'cron (five fields: minute hour day-of-month month day-of-week, in UTC) and duration_minutes (1–10080), open from each match for that many ' +
  'minutes. name is 1–100 characters (trimmed). The answer carries active_now and next_start at the server’s time.';

const input = (body: z.infer<typeof windowBody>): MaintenanceWindowInput => ({
  ...body,
  starts_at: body.starts_at == null ? null : new Date(body.starts_at),
  ends_at: body.ends_at == null ? null : new Date(body.ends_at),
});

export const maintenanceWindowRoutes: FastifyPluginAsyncZod<{ windows: MaintenanceWindowService }> = async (app, { windows }) => {
  app.get(
    '/maintenance-windows',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Maintenance windows',
        description: listDescription(WINDOW_LIST, `${WINDOW_TEXT} Filters: customer_id (that customer’s windows and its agents’), agent_id, active (open now or not).`),
        tags,
        querystring: windowListQuery,
        response: { 200: listResponse(windowSchema, WINDOW_LIST) },
      },
    },
    async (request, reply) => {
      const { customer_id: customerId, agent_id: agentId, active } = request.query;
      const caller = callerOf(request);
      return sendList(request, reply, WINDOW_LIST, { item: windowSchema, dto: toWindowDto, fetch: (page) => windows.list(caller, { customerId, agentId, active }, page) });
    },
  );

  app.post(
    '/maintenance-windows',
    {
      config: { access: 'write', audit: 'maintenance_window.create' },
      schema: { summary: 'Create a maintenance window', description: `${WINDOW_TEXT}\n\n${TIMING_TEXT}`, tags, body: windowBody, response: { 201: windowSchema } },
    },
    async (request, reply) => reply.code(201).send(toWindowDto(await windows.create(callerOf(request), input(request.body)))),
  );

  app.get(
    '/maintenance-windows/:id',
    { config: { access: 'read' }, schema: { summary: 'One maintenance window', description: WINDOW_TEXT, tags, params: idParams, response: { 200: windowSchema } } },
    async (request) => toWindowDto(await windows.get(callerOf(request), request.params.id)),
  );

  app.put(
    '/maintenance-windows/:id',
    {
      config: { access: 'write', audit: 'maintenance_window.update' },
      schema: {
        summary: 'Replace a maintenance window',
        description: `The whole window, as for POST: the form may change (one-off to recurring); customer_id and agent_id absent make it global.\n\n${WINDOW_TEXT}\n\n${TIMING_TEXT}`,
        tags,
        params: idParams,
        body: windowBody,
        response: { 200: windowSchema },
      },
    },
    async (request) => toWindowDto(await windows.update(callerOf(request), request.params.id, input(request.body))),
  );

  app.delete(
    '/maintenance-windows/:id',
    {
      config: { access: 'write', audit: 'maintenance_window.delete' },
      schema: { summary: 'Delete a maintenance window', description: `Alerts it suppressed stay suppressed. ${WINDOW_TEXT}`, tags, params: idParams, response: { 200: okSchema } },
    },
    async (request) => {
      await windows.delete(callerOf(request), request.params.id);
      return { ok: true as const };
    },
  );
};
