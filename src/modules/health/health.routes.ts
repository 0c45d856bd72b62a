// Health endpoints live outside /api/v1 (contract: //healthz, //readyz) and need no credentials, so
// orchestrators and load balancers can probe them.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { HealthService } from './health.service.js';

const liveness = z.object({ status: z.literal('ok') });
const readiness = z.object({
  status: z.literal('ready'),
  database: z.string().describe('pglite (embedded) or postgres'),
});

export const healthRoutes: FastifyPluginAsyncZod<{ health: HealthService }> = async (app, { health }) => {
  app.get(
    '/healthz',
    {
      config: { access: 'public' },
      schema: { summary: 'Liveness: the process is running', tags: ['health'], response: { 200: liveness } },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { access: 'public' },
      schema: {
        summary: 'Readiness: the database answers (503 DATABASE_UNAVAILABLE otherwise)',
        tags: ['health'],
        response: { 200: readiness },
      },
    },
    async () => health.readiness(),
  );
};
