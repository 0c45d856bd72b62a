// Writes the audit entry of every non-GET request as its response goes out. The write is not awaited
// (its durable commit would add about a millisecond to every change), but reading the log waits for
// entries in flight, so a client that has its answer still finds its entry there, and shutdown waits for
// them too. Only a crash of the process in that millisecond can lose an entry. The actor is the
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
    app.addHook('onClose', async () => audit.flush());
    app.addHook('onSend', async (request, reply, payload) => {
      const configured = request.routeOptions.config.audit;
      const note = request.auditNote;
      if (configured === false) return payload;
      if (!note && (request.method === 'GET' || request.method === 'HEAD')) return payload;
      const actor = note ?? (request.caller ? actorOf(request.caller) : undefined);
      if (!actor) return payload;
      const action = note?.action ?? configured ?? `${request.method} ${request.routeOptions.url ?? ''}`;
      // Written as the response goes out, not before: reading the log and shutting down wait for it.
      audit.recordSoon(
        {
          actor_type: actor.actor_type,
          actor: actor.actor,
          action,
          method: request.method,
          path: request.url,
          status_code: reply.statusCode,
          ip: request.ip,
        },
        // The change itself has happened; failing its response now would only mislead the client.
        (err) => request.log.error({ err }, 'could not write the audit entry'),
      );
      return payload;
    });
  },
  { name: 'audit-recorder', dependencies: ['auth'] },
);
