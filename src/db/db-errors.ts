// Recognising PostgreSQL errors by SQLSTATE, the same on pg and PGlite, and logging background work that
// failed because the database is away as the outage it is.
import { isAppError } from '../platform/errors.js';
import { LogThrottle, type LevelLog } from '../platform/log-throttle.js';

export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23505';
}

/** A row refers to one that does not exist (or is still referred to). */
export function isForeignKeyViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '23503';
}

/** SQLSTATEs that mean "the database is away", not "this statement is wrong". */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: a fast or smart shutdown (restart) ended the session
  '57P02', // crash_shutdown: another backend crashed, the server is resetting
  '57P03', // cannot_connect_now: starting up, shutting down, or in recovery
  '53300', // too_many_connections
  // read_only_sql_transaction: connected to a standby (a failover behind a proxy or pooler sends new
  // connections there before it is promoted), or to a primary demoted to read-only. Writes work again
  // once it is promoted; reads never failed. Issue 57: these were 500s with a stack trace each.
  '25006',
]);
/** Socket errors of a connection that could not be made or was cut. */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** pg and pg-pool report a lost or impossible connection with plain Errors that carry no code. */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/, // unexpectedly, or due to connection timeout (pg-pool's connectionTimeoutMillis)
  /^timeout exceeded when trying to connect$/, // pg-pool: no client within connectionTimeoutMillis
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  // The same as 25006, for a driver or wrapper that kept the message and lost the code.
  /^cannot execute .+ in a read-only transaction$/,
];

/**
 * The database cannot be reached right now (restarting, down, unreachable, out of connections, or a
 * standby that takes no writes yet): the request may succeed if sent again shortly, so it is a 503, not a 500. SQLSTATE class 08 is
 * connection_exception. pg throws socket errors bare; the cause is followed only out of our own
 * AppErrors (services wrap database failures in them), never out of, say, fetch's "fetch failed",
 * whose refused connection is some other server's.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 5; depth++) {
    const { code, message, cause, errors } = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_ERRNOS.has(code))) return true;
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => m.test(message))) return true;
    // A host name with several addresses fails with an AggregateError of one error per address.
    if (Array.isArray(errors) && errors.length > 0) e = errors[0];
    else if (isAppError(e)) e = cause;
    else return false;
  }
  return false;
}

/**
 * What is worth logging of a connection failure: the code and message of its innermost cause (services
 * wrap the driver's error; the stack is the driver's own and says nothing).
 */
export function failureSummary(err: unknown): { code?: string; message: string } {
  let inner = err;
  for (let depth = 0; depth < 5 && typeof inner === 'object' && inner !== null && (inner as { cause?: unknown }).cause !== undefined; depth++) {
    inner = (inner as { cause?: unknown }).cause;
  }
  const { code, message } = (typeof inner === 'object' && inner !== null ? inner : {}) as { code?: unknown; message?: unknown };
  return { ...(typeof code === 'string' ? { code } : {}), message: typeof message === 'string' ? message : String(inner) };
}

/** One throttle per logger: a job's outage lines share a window however many of its objects log. */
const outageLogs = new WeakMap<LevelLog, LogThrottle>();

/**
 * Logs background work that failed (a loop's round, a batch, a write after the answer). While the
 * database is away every round fails alike: that is an outage, logged at warn once per 10 s per
 * `message` with the cause's code and message and no stack trace, as the requests' 503s are
 * (error-handler.ts). Anything else is an error with its stack.
 */
export function logFailure(logger: LevelLog, err: unknown, fields: Record<string, unknown>, message: string): void {
  if (!isDatabaseUnavailable(err)) {
    logger.error({ ...fields, err }, message);
    return;
  }
  let throttle = outageLogs.get(logger);
  if (!throttle) outageLogs.set(logger, (throttle = new LogThrottle(logger, { windowMs: 10_000 })));
  throttle.warn(message, { ...fields, error: failureSummary(err) }, `${message}: database unavailable`);
}
