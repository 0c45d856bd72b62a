import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callerOf } from '../../http/auth.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import { AUDIT_LIST, auditEntrySchema, auditQuery, toAuditDto } from './audit.schemas.js';
import type { AuditService } from './audit.service.js';

export const auditRoutes: FastifyPluginAsyncZod<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/audit',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Audit log, newest first',
        description: listDescription(
          AUDIT_LIST,
          'Every non-GET request by a user or API key (agent protocol traffic excepted), logins (success and ' +
            'failure), two-factor changes and terminal sessions. Not available to customer-scoped keys.',
        ),
        tags: ['audit'],
        querystring: auditQuery,
        response: { 200: listResponse(auditEntrySchema, AUDIT_LIST) },
      },
    },
    async (request, reply) => {
      const { actor, action, from, to } = request.query;
      const caller = callerOf(request);
      const filter = { actor, action, from: from ? new Date(from) : undefined, to: to ? new Date(to) : undefined };
      return sendList(request, reply, AUDIT_LIST, { item: auditEntrySchema, dto: toAuditDto, fetch: (page) => audit.list(caller, filter, page) });
    },
  );
};
