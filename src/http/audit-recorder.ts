// Writes the audit entry of every non-GET request as its response goes out. The write is not awaited
// (its durable commit would add about a millisecond to every change, and entries gather for 25 ms to
// share one statement: audit.service.ts), but reading the log waits for entries in flight, so a client
// that has its answer still finds its entry there, and shutdown waits for them too. Only a crash of the
// process in those milliseconds can lose an entry. The actor is the authenticated caller, or what a
// sign-in route named (the username trying to log in). Routes may name their action (`config.audit`), or
// opt out with `audit: false` (agent protocol traffic). The entry names the object changed
// (audit-targets.ts); a deletion's object is named before the handler removes it.
// The client's address is read when the request arrives: once the client has hung up (a login whose
// browser tab was closed while the password was checked), the socket no longer knows it, and the entry
// was written with an empty address.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { actorOf } from '../modules/auth/caller.js';
import { targetOf, type AuditTarget } from '../modules/audit/audit-targets.js';
import type { AuditService } from '../modules/audit/audit.service.js';
import { logFailure } from '../db/db-errors.js';

interface AuditNote {
  actor_type: 'user' | 'api_key';
  actor: string;
  action?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by sign-in routes, which have no authenticated caller, to name the actor and the action. */
    auditNote: AuditNote | null;
    /** The client's address as the request arrived. */
    auditIp: string;
    /** The object of a deletion, named before it was deleted. */
    auditTarget: AuditTarget | null;
  }
}

export function noteAudit(request: FastifyRequest, note: AuditNote): void {
  request.auditNote = note;
}

export const auditRecorderPlugin = fp(
  async (app: FastifyInstance, { audit, prefix }: { audit: AuditService; prefix: string }) => {
    app.decorateRequest('auditNote', null);
    app.decorateRequest('auditIp', '');
    app.decorateRequest('auditTarget', null);
    app.addHook('onClose', async () => audit.flush());
    app.addHook('onRequest', async (request) => {
      request.auditIp = request.ip ?? '';
    });
    app.addHook('preHandler', async (request) => {
      if (request.method !== 'DELETE' || request.routeOptions.config.audit === false) return;
      const target = targetOf({ url: request.routeOptions.url ?? '', method: request.method, params: request.params, statusCode: 0, payload: null }, prefix);
      if (target && 'kind' in target) request.auditTarget = await audit.nameNow(target);
    });
    app.addHook('onSend', async (request, reply, payload) => {
      const configured = request.routeOptions.config.audit;
      const note = request.auditNote;
      if (configured === false) return payload;
      if (!note && (request.method === 'GET' || request.method === 'HEAD')) return payload;
      const actor = note ?? (request.caller ? actorOf(request.caller) : undefined);
      if (!actor) return payload;
      const action = note?.action ?? configured ?? `${request.method} ${request.routeOptions.url ?? ''}`;
      const url = request.routeOptions.url ?? '';
      // Sign-in and two-factor routes act on the user named as the actor.
      const target = url.startsWith(`${prefix}/auth/`)
        ? { label: `user ${actor.actor}` }
        : (request.auditTarget ?? targetOf({ url, method: request.method, params: request.params, statusCode: reply.statusCode, payload }, prefix));
      // Written as the response goes out, not before: reading the log and shutting down wait for it.
      audit.recordSoon(
        {
          actor_type: actor.actor_type,
          actor: actor.actor,
          action,
          method: request.method,
          path: request.url,
          status_code: reply.statusCode,
          ip: request.auditIp || (request.ip ?? ''),
          target,
        },
        // The change itself has happened; failing its response now would only mislead the client.
        (err) => logFailure(request.server.log, err, { reqId: request.id }, 'could not write the audit entry'),
      );
      return payload;
    });
  },
  { name: 'audit-recorder', dependencies: ['auth'] },
);
