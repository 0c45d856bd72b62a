// One place turns every failure into the contract's error body: AppErrors by their code, request
// validation into 400 with details, framework errors by their status, a database that is away into a 503
// with Retry-After (it and the cluster link's 503s logged as one warn line per 10 s, not a stack trace
// per request), and everything else into a 500 that says nothing about internals (the details go to
// the log, tied to the request id).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { failureSummary, isDatabaseUnavailable } from '../db/db-errors.js';
import { AppError, codeForStatus, isAppError, type ErrorDetail } from '../platform/errors.js';
import { LogThrottle } from '../platform/log-throttle.js';
import { errorBody } from './error-body.js';

interface Mapped {
  status: number;
  code: string;
  message: string;
  details?: ErrorDetail[];
  headers?: Readonly<Record<string, string>>;
}

const FRAMEWORK_CODES: Record<string, { code: string; message?: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'INVALID_JSON', message: 'Request body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'INVALID_JSON', message: 'Request body is empty but content-type is JSON' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE' },
};

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

function mapError(err: FastifyError): Mapped {
  if (isAppError(err)) {
    return { status: err.status, code: err.code, message: err.message, details: err.details, headers: err.headers };
  }
  if (err.validation) {
    const part = PART_NAMES[err.validationContext ?? ''] ?? 'request';
    const details = err.validation.map((v) => ({
      path: v.instancePath.split('/').filter(Boolean).join('.') || part,
      message: v.message ?? 'is invalid',
    }));
    const first = details[0];
    const message = first ? `Invalid ${part}: ${first.path}: ${first.message}` : `Invalid ${part}`;
    return { status: 400, code: 'VALIDATION_ERROR', message, details };
  }
  const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
  if (status >= 400 && status < 500) {
    const known = FRAMEWORK_CODES[err.code];
    return { status, code: known?.code ?? codeForStatus(status), message: known?.message ?? err.message };
  }
  return { status: 500, code: 'INTERNAL_ERROR', message: 'Internal server error' };
}

/** Seconds a client is asked to wait while the database is away: a PostgreSQL restart takes a few. */
const DATABASE_RETRY_AFTER_S = '5';

/**
 * A failure because the database is away (restarting, down, out of connections) is a 503 with
 * Retry-After, whoever wrapped it (a service's 500 or 503): the request may succeed if sent again. A
 * 4xx the caller caused stays what it is. Undefined when the database is not the reason.
 */
function databaseAway(err: FastifyError, mapped: Mapped): Mapped | undefined {
  const away = (isAppError(err) && err.code === 'DATABASE_UNAVAILABLE') || isDatabaseUnavailable(err);
  if (!away || mapped.status < 500) return undefined;
  const base = mapped.status === 503 ? mapped : { status: 503, code: 'DATABASE_UNAVAILABLE', message: 'The database is unavailable; try again shortly' };
  return { ...base, headers: { 'retry-after': DATABASE_RETRY_AFTER_S, ...mapped.headers } };
}

export const errorHandlerPlugin = fp(
  async (app: FastifyInstance) => {
    // While the database is away every request that needs it fails: one line per interval, not each.
    const outage = new LogThrottle(app.log, { windowMs: 10_000 });
    app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const general = mapError(err);
      const away = databaseAway(err, general);
      const mapped = away ?? general;
      if (away) outage.warn('database-away', { error: failureSummary(err) }, 'database unavailable: answered 503', request.log);
      // NATS away: every request for an agent on another instance fails alike, and the bus logged the loss once.
      else if (mapped.code === 'CLUSTER_UNAVAILABLE') outage.warn('cluster-away', { code: mapped.code }, 'cluster link (NATS) unavailable: answered 503', request.log);
      else if (mapped.status >= 500) request.log.error({ err }, 'request failed');
      else request.log.info({ code: mapped.code, status: mapped.status }, mapped.message);
      if (mapped.headers) reply.headers(mapped.headers);
      return reply.code(mapped.status).send(errorBody(mapped.code, mapped.message, request.id, mapped.details));
    });

    app.setNotFoundHandler((request, reply) => {
      // The path only: the query string may hold credentials.
      const path = request.url.split('?')[0];
      const err = new AppError('NOT_FOUND', `Route ${request.method} ${path} not found`);
      return reply.code(err.status).send(errorBody(err.code, err.message, request.id));
    });

    // While shutting down, new requests on kept-alive connections get a 503 in the contract's body
    // (Fastify's built-in one has another shape), so load balancers move on and clients can retry.
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    app.addHook('onRequest', async () => {
      if (closing) throw new AppError('SERVICE_UNAVAILABLE', 'Server is shutting down');
    });
    // Answers finished while stopping end their connection; a kept-alive socket would otherwise hold
    // the shutdown open until its keep-alive timeout.
    app.addHook('onSend', async (_request, reply) => {
      if (closing) reply.header('connection', 'close');
    });
  },
  { name: 'error-handler' },
);
