// Authentication and authorization for every route, in one onRequest hook: find the credentials
// (X-API-Key / api_key, or Authorization: Bearer / token), resolve them to a caller, and let the route's
// declared access level decide (modules/auth/access-policy.ts). Credentials on public routes are ignored.
// Wrong or empty API keys are counted per source address (modules/auth/attempt-throttle.ts): past the
// limit, a wrong key from there is 429 instead of 401, and the address is logged and audited in
// summary; a valid key is always accepted, whoever else guessed from its address. Bad bearer tokens
// are not counted: a token is an HMAC-signed JWT that cannot be guessed, and a console left open with an
// expired one must not lock its office's agents out.
import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { decideAccess } from '../modules/auth/access-policy.js';
import { addressGroup, type ApiKeyThrottle, type GuessingSummary } from '../modules/auth/attempt-throttle.js';
import type { AuditService } from '../modules/audit/audit.service.js';
import { requireUnscoped, type Caller } from '../modules/auth/caller.js';
import type { TokenSigner } from '../modules/auth/tokens.js';
import type { Clock } from '../platform/clock.js';
import { AppError } from '../platform/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling; null on public routes and before authentication. */
    caller: Caller | null;
  }
}

export interface Authenticators {
  apiKey(key: string): Promise<Caller | null>;
  accessToken(token: string): Promise<Caller | null>;
}

export interface AuthOptions extends Authenticators {
  /** Counts failed API-key attempts per address; without it keys are not throttled. */
  keyThrottle?: ApiKeyThrottle;
  audit?: Pick<AuditService, 'recordSoon'>;
}

/** The signed-in caller of a non-public route (the hook guarantees one). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new AppError('UNAUTHORIZED', 'Authentication required');
  return request.caller;
}

/** Registers @fastify/jwt (HS256 only) and returns the token signer the auth service uses. */
export async function registerJwt(app: FastifyInstance, secret: string, clock: Clock): Promise<TokenSigner> {
  await app.register(fastifyJwt, { secret, sign: { algorithm: 'HS256' }, verify: { algorithms: ['HS256'] } });
  return {
    sign: (claims, expiresInSeconds) =>
      app.jwt.sign(claims, { expiresIn: expiresInSeconds, clockTimestamp: clock.now().getTime() }),
    verify: (token) => {
      try {
        const claims = app.jwt.verify<Record<string, unknown>>(token, { clockTimestamp: clock.now().getTime() });
        return typeof claims === 'object' && claims !== null ? claims : null;
      } catch {
        return null;
      }
    },
  };
}

type Presented = { kind: 'api_key' | 'token'; value: string } | undefined;

function presentedCredentials(request: FastifyRequest): Presented {
  const query = request.query as Record<string, unknown> | undefined;
  const headerKey = request.headers['x-api-key'];
  const key = typeof headerKey === 'string' ? headerKey : query?.api_key;
  // An empty api_key is still an attempt with a key, and a wrong one.
  if (key !== undefined) return { kind: 'api_key', value: typeof key === 'string' ? key : '' };
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return { kind: 'token', value: match?.[1] ?? '' };
  }
  if (query?.token !== undefined) return { kind: 'token', value: typeof query.token === 'string' ? query.token : '' };
  return undefined;
}

/** Checking credentials needs the database; when it is away that is a 503 to retry, not a 500. */
async function resolve(auth: Authenticators, kind: 'api_key' | 'token', value: string): Promise<Caller | null> {
  try {
    return await (kind === 'api_key' ? auth.apiKey(value) : auth.accessToken(value));
  } catch (err) {
    if (err instanceof AppError) throw err; // a decided refusal (an expired key), not an outage
    throw new AppError('SERVICE_UNAVAILABLE', 'Credentials cannot be checked right now; try again', { cause: err });
  }
}

const unauthenticated = (message: string) =>
  new AppError('UNAUTHORIZED', message, { headers: { 'www-authenticate': 'Bearer realm="rmm"' } });

/** One warn line and one audit entry per throttled address and period; never the key. */
function reportGuessing(request: FastifyRequest, summary: GuessingSummary, audit: AuthOptions['audit']): void {
  const { address, attempts, periodSeconds } = summary;
  const until = summary.throttledUntil.toISOString();
  request.log.warn(
    { address, attempts, period_s: periodSeconds, throttled_until: until },
    `${attempts} failed API-key attempts from ${address} in the last ${periodSeconds} s; throttled until ${until}`,
  );
  // The audit entry has no details field: the count and period go with the actor, which is unknown.
  audit?.recordSoon(
    { actor_type: 'api_key', actor: `unknown key, ${attempts} attempts in ${periodSeconds} s`, action: 'auth.api_key_rejected', method: request.method, path: request.url, status_code: 429, ip: address },
    (err) => request.log.error({ err }, 'could not write the audit entry'),
  );
}

export const authPlugin = fp(
  async (app: FastifyInstance, auth: AuthOptions) => {
    const throttle = auth.keyThrottle;
    app.decorateRequest('caller', null);
    app.addHook('onRequest', async (request) => {
      const access = request.routeOptions.config.access;
      // Unknown routes (the 404 handler) declare nothing; public routes need nobody.
      if (access === undefined || access === 'public') return;
      const presented = presentedCredentials(request);
      if (!presented) throw unauthenticated('Authentication required: an API key or a bearer token');
      // injectWS (tests) hands Fastify a request without a socket, whose ip would throw. The attempt is
      // taken before the first await, so a burst of concurrent guesses cannot all slip under the limit.
      const attempt = presented.kind === 'api_key' ? throttle?.begin(addressGroup(request.raw.socket ? request.ip : 'unknown')) : undefined;
      let caller: Caller | null;
      try {
        caller = presented.value ? await resolve(auth, presented.kind, presented.value) : null;
      } catch (err) {
        attempt?.passed(); // an expired key or an outage, not a guess
        throw err;
      }
      if (!caller) {
        const failed = attempt?.failed();
        if (failed?.summary) reportGuessing(request, failed.summary, auth.audit);
        throw failed?.error ?? unauthenticated(presented.kind === 'api_key' ? 'Invalid API key' : 'Invalid or expired token');
      }
      attempt?.passed();
      request.caller = caller;
      const decision = decideAccess(access, caller, request.method);
      if (decision === 'unauthenticated') throw unauthenticated('This route takes a signed-in user\'s token only, not an API key');
      if (decision !== 'allow' && access === 'agent_key') throw new AppError('FORBIDDEN', 'Only an agent key (permission agent) may call this');
      if (decision !== 'allow') {
        const who = caller.kind === 'api_key' ? `an API key with permission ${caller.permission}` : `a user with role ${caller.role}`;
        throw new AppError('FORBIDDEN', `Not allowed for ${who}`);
      }
      if (request.routeOptions.config.serverWide) requireUnscoped(caller);
    });
  },
  { name: 'auth', dependencies: ['route-access'] },
);

