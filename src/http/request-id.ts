// Request ids: a caller's own `x-request-id` (from a proxy or a client tracing a call) is kept when it
// is short and plain; otherwise we make one. Every response carries it, errors and 404s included.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';

const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function generateRequestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && ACCEPTED_ID.test(given) ? given : randomUUID();
}

export const requestIdPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onSend', async (request, reply) => {
      reply.header('x-request-id', request.id);
    });
  },
  { name: 'request-id' },
);
