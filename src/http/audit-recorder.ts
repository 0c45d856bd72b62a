// Writes the audit entry of every non-GET request just before its response goes out, so a client that
// has its answer finds the entry already in the log (and a crash cannot lose the entry of a change the
// client saw acknowledged). The actor is the
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
    app.addHook('onSend', async (request, reply, payload) => {
      const configured = request.routeOptions.config.audit;
      const note = request.auditNote;
      if (configured === false) return payload;
      if (!note && (request.method === 'GET' || request.method === 'HEAD')) return payload;
      const actor = note ?? (request.caller ? actorOf(request.caller) : undefined);
      if (!actor) return payload;
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
        // The change itself has happened; failing its response now would only mislead the client.
        request.log.error({ err }, 'could not write the audit entry');
      }
      return payload;
    });
  },
  { name: 'audit-recorder', dependencies: ['auth'] },
);
