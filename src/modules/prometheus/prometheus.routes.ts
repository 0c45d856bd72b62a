// GET /metrics in Prometheus's text format (issue 34), for both apps, never public by default: with METRICS_TOKEN it
// takes that bearer token; without, it answers only clients on this machine that did not come through a
// proxy (a reverse proxy on the same host would otherwise make every visitor "local").
// countResponses adds the hook that counts heartbeats (and times them) and refused sign-ins.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { AppError } from '../../platform/errors.js';
import type { ServerMetrics } from './server-metrics.js';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** GET /metrics of a registry: the RMM server's, or the call-status service's. */
export const prometheusRoutes: FastifyPluginAsyncZod<{ registry: Registry; token: string | undefined }> = async (app, { registry, token }) => {
  app.get(
    '/metrics',
    {
      // Guarded here rather than by the API's keys: Prometheus scrapes with a bearer token of its own.
      config: { access: 'public' },
      schema: {
        summary: 'Prometheus metrics of this service instance',
        description:
          'The Prometheus text exposition format. With METRICS_TOKEN set: `Authorization: Bearer <METRICS_TOKEN>` (else 401). ' +
          'Unset: only clients on this machine that did not come through a proxy (no X-Forwarded-For or Forwarded header), else 403.',
        tags: ['operations'],
        response: { 200: { description: 'Metrics', content: { 'text/plain': { schema: z.string() } } } },
      },
    },
    async (request, reply) => {
      if (token !== undefined) {
        const presented = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
        if (!presented || !sameToken(presented, token)) {
          throw new AppError('UNAUTHORIZED', 'GET /metrics takes the METRICS_TOKEN bearer token', { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
        }
      } else {
        const direct = request.headers['x-forwarded-for'] === undefined && request.headers.forwarded === undefined;
        if (!direct || !LOOPBACK.test(request.socket.remoteAddress ?? '')) {
          throw new AppError('FORBIDDEN', 'GET /metrics answers only this machine; set METRICS_TOKEN to scrape it from elsewhere');
        }
      }
      return reply.type(registry.contentType).header('cache-control', 'no-store').send(await registry.metrics());
    },
  );
};

/** On the root app, before the routes: a hook in the metrics plugin would see only its own routes. */
export function countResponses(app: FastifyInstance, metrics: ServerMetrics, apiPrefix: string): void {
  const heartbeatRoute = `${apiPrefix}/agent/heartbeat`;
  const signIn: Record<string, string> = { [`${apiPrefix}/auth/login`]: 'password', [`${apiPrefix}/auth/2fa/validate`]: 'second_factor' };
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route === heartbeatRoute && request.method === 'POST') {
      const stored = reply.statusCode === 200;
      metrics.heartbeats.inc({ outcome: stored ? 'stored' : `http_${reply.statusCode}` });
      if (stored) metrics.heartbeatSeconds.observe(reply.elapsedTime / 1000);
    } else if (route !== undefined && signIn[route] && request.method === 'POST' && (reply.statusCode === 401 || reply.statusCode === 429)) {
      metrics.loginFailures.inc({ reason: reply.statusCode === 429 ? 'throttled' : signIn[route] });
    }
  });
}
