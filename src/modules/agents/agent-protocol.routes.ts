// What agents call: /agent/register and /agent/heartbeat. Machine traffic, so not audited, but for an
// agent that joins a customer by registering (issue 57): that changes who may see and command it. The
// heartbeat keeps its body as the exact bytes received (its own JSON parser below) and goes through the
// group-commit writer; a heartbeat is acknowledged only once it is stored.
import { isUtf8 } from 'node:buffer';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { errorBody } from '../../http/error-body.js';
import { LogThrottle } from '../../platform/log-throttle.js';
import { AppError } from '../../platform/errors.js';
import { actorOf, scopeOf, type Caller } from '../auth/caller.js';
import type { AuditService } from '../audit/audit.service.js';
import { heartbeatBody, heartbeatResponse, registerBody, registerResponse } from './agents.schemas.js';
import type { AgentService, RegistrationOutcome } from './agents.service.js';
import type { UpdateFlags } from '../firmware/update-flag.js';
import type { SoftwareInventory } from '../wau/software-inventory.js';
import type { HeartbeatWriter } from './heartbeat-writer.js';
import { heartbeatValidatorCompiler } from './heartbeat-body-validator.js';
import { logFailure } from '../../db/db-errors.js';

const tags = ['agent protocol'];
type HeartbeatBody = z.infer<typeof heartbeatBody>;
export const HEARTBEAT_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * Overload: registrations and heartbeats being worked on at once, at most. Past it they are refused at
 * once (503 with Retry-After), before their bodies are read. Without a bound a server behind its
 * database kept accepting work it could not finish: the queued requests held their bodies (memory
 * climbed to 1 GB), the agents gave up after 30 s while the server still parsed and wrote what they had
 * sent, and throughput collapsed to a few heartbeats a second (PGlite, 500 agents a second starting).
 * 10,000 agents at one heartbeat a minute keep a few dozen in flight, a few hundred while they start.
 * Refused agents come back on their own (a heartbeat at the next interval, a registration after its
 * backoff); the ones let through are answered in time.
 */
export const MAX_AGENT_REQUESTS_IN_FLIGHT = 1000;
/**
 * Registrations among them, at most. A registration is two statements of its own (heartbeats share one
 * per batch), so a thousand registrations queued on the embedded database's one connection made the
 * heartbeats behind them wait past the agents' 30 s: fleet-scale on PGlite with a busy loop taking half
 * the machine failed 5,416 heartbeats in its start-up burst with the shared bound alone, none with this
 * one (bench/README.md, 2026-11-27). Agents retry a refused registration with their backoff: a new agent
 * starts a little later; the heartbeats and sockets of registered agents are not concerned.
 */
export const MAX_REGISTRATIONS_IN_FLIGHT = 100;
const OVERLOAD_RETRY_AFTER_S = 10;
const OVERLOAD_MESSAGE = `The server is overloaded; try again in ${OVERLOAD_RETRY_AFTER_S} s`;
const OVERLOAD_NOTE =
  ` 503 SERVICE_UNAVAILABLE with Retry-After (${OVERLOAD_RETRY_AFTER_S} s), before the body is read, while the server is overloaded (${MAX_AGENT_REQUESTS_IN_FLIGHT} registrations and heartbeats in progress, or ${MAX_REGISTRATIONS_IN_FLIGHT} registrations).`;

declare module 'fastify' {
  interface FastifyRequest {
    /** The heartbeat body as received, in valid UTF-8 (only on the heartbeat route). */
    rawBody: Buffer | null;
  }
}

export const agentProtocolRoutes: FastifyPluginAsyncZod<{
  agents: AgentService;
  heartbeats: HeartbeatWriter;
  updates: UpdateFlags;
  inventory: Pick<SoftwareInventory, 'examine' | 'record' | 'forget'>;
  /** Where an agent joining a customer by registering is recorded. */
  audit: Pick<AuditService, 'recordSoon'>;
  /** MAX_AGENT_REQUESTS_IN_FLIGHT unless a test says otherwise. */
  maxInFlight?: number;
  /** MAX_REGISTRATIONS_IN_FLIGHT unless a test says otherwise. */
  maxRegistrationsInFlight?: number;
}> = async (app, { agents, heartbeats, updates, inventory, audit, maxInFlight = MAX_AGENT_REQUESTS_IN_FLIGHT, maxRegistrationsInFlight = MAX_REGISTRATIONS_IN_FLIGHT }) => {
  let inFlight = 0;
  let registrationsInFlight = 0;
  // A refusal must cost next to nothing, or refusing is what overloads the server: thrown, each one
  // built an error with a stack and the error handler logged it with its stack resolved through source
  // maps, 4.4 % of a PGlite server's CPU in fleet-scale's start-up burst (2026-11-27) while it refused
  // hundreds a second. So the answer goes out from here, and the log gets one line per window.
  const refusals = new LogThrottle(app.log, { windowMs: 10_000 });
  app.addHook('onClose', async () => refusals.flush());
  const refuseWhenOverloaded = (registration: boolean) => async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (inFlight < maxInFlight && (!registration || registrationsInFlight < maxRegistrationsInFlight)) {
      inFlight++;
      if (registration) registrationsInFlight++;
      // 'close' comes once, whether the answer went out or the client went away first.
      reply.raw.once('close', () => {
        inFlight--;
        if (registration) registrationsInFlight--;
      });
      return undefined;
    }
    refusals.warn('overloaded', { inFlight, registrationsInFlight }, 'overloaded: refused agent requests with 503', request.log);
    return reply.code(503).header('retry-after', String(OVERLOAD_RETRY_AFTER_S)).send(errorBody('SERVICE_UNAVAILABLE', OVERLOAD_MESSAGE, request.id));
  };

  app.post(
    '/agent/register',
    {
      config: { access: 'agent_key', audit: false },
      onRequest: refuseWhenOverloaded(true),
      schema: {
        summary: 'Register an agent',
        description:
          'Agent keys only: any other key, and any user, is 403 FORBIDDEN, whatever its permission. ' +
          'Matching, in order: an existing agent with agent_id; else a pre-registered agent (hostname still ' +
          '"(ausstehend)", within the key\'s customer scope) whose name equals name (or hostname when name is ' +
          'absent), which keeps its id; else a new agent (with the given agent_id or a generated one). Never by ' +
          'hostname. A customer-scoped key registers into its customer: an agent_id of another customer\'s agent ' +
          'is 404 NOT_FOUND and changes nothing; an agent without a customer joins the key\'s customer, recorded ' +
          'in the audit log (action agent.join_customer: the key, the agent\'s id and the customer).' + OVERLOAD_NOTE,
        tags,
        body: registerBody,
        response: { 200: registerResponse },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const { joined, ...registered } = await agents.register(caller, request.body);
      inventory.forget(registered.agent_id);
      if (joined) recordJoin(request, caller, registered, joined);
      return registered;
    },
  );

  /** The audit entry and log line of an agent that joined the key's customer by registering. */
  const recordJoin = (request: FastifyRequest, caller: Caller, agent: RegistrationOutcome, customer: NonNullable<RegistrationOutcome['joined']>) => {
    request.log.info({ agent_id: agent.agent_id, customer_id: customer.id }, 'an agent without a customer joined the registering key\'s customer');
    audit.recordSoon(
      {
        ...actorOf(caller),
        action: 'agent.join_customer',
        method: request.method,
        path: request.url,
        status_code: 200,
        ip: request.auditIp || request.ip,
        target: { label: `agent ${agent.agent_id} (${agent.name}) joined customer ${customer.number} ${customer.name}`, customerId: customer.id },
      },
      (err) => request.log.error({ err }, 'could not write the audit entry'),
    );
  };

  // The heartbeat gets its own JSON parser, in this plugin's scope only, to keep the exact bytes: stored
  // as a Buffer, outside the JavaScript heap, while the heartbeat waits for its batch. Invalid UTF-8 is
  // stored as the text it decodes to (U+FFFD for each bad sequence), as when bodies went as strings:
  // PostgreSQL would refuse the bytes, and with them every heartbeat of the batch.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: HEARTBEAT_BODY_LIMIT }, (request, body, done) => {
    const bytes = body as Buffer;
    const text = bytes.toString('utf8');
    try {
      const parsed: unknown = JSON.parse(text);
      request.rawBody = isUtf8(bytes) ? bytes : Buffer.from(text, 'utf8');
      done(null, parsed);
    } catch {
      done(new AppError('INVALID_JSON', 'Request body is not valid JSON'), undefined);
    }
  });
  app.decorateRequest('rawBody', null);

  /**
   * Hands the heartbeat to the writer and reads its software list, synchronously, then lets go of the
   * parsed body: while the heartbeat waits for its batch, nothing of the body is on the JavaScript heap
   * for young-generation collections to copy (heartbeat-input.ts, PendingHeartbeat). A function of its
   * own so that the body is no variable of the handler, which lives across the wait.
   */
  const handOver = (request: FastifyRequest, body: HeartbeatBody) => {
    const raw = request.rawBody;
    if (raw === null) throw new AppError('INVALID_JSON', 'Request body is not valid JSON');
    const caller = callerOf(request);
    const receivedAt = agents.now();
    const agent = { id: body.agent_id, platform: body.platform, sha256: body.agent_sha256?.toLowerCase() ?? null };
    const written = heartbeats.write({
      agentId: agent.id,
      platform: agent.platform,
      hostname: body.hostname ?? null,
      agentVersion: body.agent_version ?? null,
      agentSha256: agent.sha256,
      raw,
      parsed: body,
      keyHint: caller.kind === 'api_key' ? caller.keyHint : null,
      scope: scopeOf(caller),
      receivedAt,
    });
    const software = inventory.examine({ agentId: agent.id, platform: agent.platform, software: body.software, receivedAt });
    (request as { body: unknown }).body = undefined;
    request.rawBody = null;
    return { agent, receivedAt, written, software };
  };

  app.post(
    '/agent/heartbeat',
    {
      bodyLimit: HEARTBEAT_BODY_LIMIT,
      // The body is stored byte for byte, a NUL in the system data included: the input guard leaves it
      // alone, and the schema checks the fields that go into the agent row.
      config: { access: 'agent', audit: false, rawText: true },
      onRequest: refuseWhenOverloaded(false),
      validatorCompiler: heartbeatValidatorCompiler,
      schema: {
        summary: 'Heartbeat: the body is the system data, stored byte for byte',
        description:
          'Required top-level fields: agent_id, platform; optional hostname, agent_version, agent_sha256. Everything ' +
          'else is stored untouched and served back by GET /agents/{id}/system. Unknown agent (or outside the key\'s ' +
          'customer) → 404 AGENT_NOT_REGISTERED. Answered after the heartbeat and its metric samples (contract §2; at ' +
          'most 2,000 per heartbeat, the first in document order) are stored; 503 when they could not be. ' +
          'update_available is true when an update was requested for the agent and firmware for its platform exists ' +
          'whose sha256 differs from agent_sha256; then `update` = {version, sha256, size, download_url} (download_url on the settings\' backend_url, else on the address the heartbeat came to). ' +
          'A heartbeat reporting the latest firmware\'s sha256 clears the flag. ' +
          'A windows heartbeat\'s `software` array (at most 5,000 entries looked at; system components dropped) replaces the agent\'s stored software inventory when it differs; without the array the stored one stays.' + OVERLOAD_NOTE,
        tags,
        body: heartbeatBody,
        response: { 200: heartbeatResponse },
      },
    },
    async (request) => {
      const { agent, receivedAt, written, software } = handOver(request, request.body);
      const outcome = await written.catch((err: unknown) => {
        // Logged by the error handler, through the cause (bounded while the database is away).
        throw new AppError('SERVICE_UNAVAILABLE', 'The heartbeat could not be stored; send it again', { cause: err });
      });
      if (!outcome.found) throw new AppError('AGENT_NOT_REGISTERED', 'Agent is not registered; register it first');
      // The heartbeat itself is stored; an inventory that cannot be stored now is sent again next minute.
      await inventory.record(software).catch((err: unknown) => logFailure(request.server.log, err, { agent_id: agent.id, reqId: request.id }, 'could not store the software inventory'));
      const offer = await updates.offer({ ...agent, updateRequested: outcome.updateRequested }, `${request.protocol}://${request.host}`);
      return { ok: true as const, status: 'online' as const, server_time: receivedAt.toISOString(), ...offer };
    },
  );
};
