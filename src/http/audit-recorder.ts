// Writes the audit entry of every non-GET request once its response is sent. The actor is the
// authenticated caller, or what a sign-in route named (the username trying to log in). Routes may name
// their action (`config.audit`), or opt out with `audit: false` (agent protocol traffic).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { actorOf } from '../modules/auth/caller.js';
import type { AuditService } from '../modules/audit/audit.service.js';

interface AuditNote {
  actor_type: 'user' | 'api_key';
  actor: string;
  action?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by sign-in routes, which have no authenticated caller, to name the actor and the action. */
    auditNote: AuditNote | null;
  }
}

export function noteAudit(request: FastifyRequest, note: AuditNote): void {
  request.auditNote = note;
}

export const auditRecorderPlugin = fp(
  async (app: FastifyInstance, { audit }: { audit: AuditService }) => {
    app.decorateRequest('auditNote', null);
    app.addHook('onResponse', async (request, reply) => {
      const configured = request.routeOptions.config.audit;
      const note = request.auditNote;
      if (configured === false) return;
      if (!note && (request.method === 'GET' || request.method === 'HEAD')) return;
      const actor = note ?? (request.caller ? actorOf(request.caller) : undefined);
      if (!actor) return;
      const action = note?.action ?? configured ?? `${request.method} ${request.routeOptions.url ?? ''}`;
      try {
        await audit.record({
          actor_type: actor.actor_type,
          actor: actor.actor,
          action,
          method: request.method,
          path: request.url,
          status_code: reply.statusCode,
          ip: request.ip,
        });
      } catch (err) {
        request.log.error({ err }, 'could not write the audit entry');
      }
    });
  },
  { name: 'audit-recorder', dependencies: ['auth'] },
);
