import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { auditEntrySchema, auditQuery, toAuditDto } from './audit.schemas.js';
import type { AuditService } from './audit.service.js';

export const auditRoutes: FastifyPluginAsyncZod<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/audit',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Audit log, newest first',
        description:
          'Every non-GET request by a user or API key (agent protocol traffic excepted), logins (success and ' +
          'failure), two-factor changes and terminal sessions. Not available to customer-scoped keys.',
        tags: ['audit'],
        querystring: auditQuery,
        response: { 200: z.array(auditEntrySchema) },
      },
    },
    async (request) => {
      const { from, to, ...rest } = request.query;
      const rows = await audit.list(callerOf(request), {
        ...rest,
        from: from ? new Date(from) : undefined,
        to: to ? new Date(to) : undefined,
      });
      return rows.map(toAuditDto);
    },
  );
};
