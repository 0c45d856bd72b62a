// One rule at the edge of both apps for text the database cannot hold or the client did not mean:
// a NUL (U+0000; PostgreSQL text refuses it, which was a 500) or a lone UTF-16 surrogate (silently
// stored as U+FFFD) in a query value, a path parameter, or any string or object key of a JSON body, and
// a query escape that is not UTF-8 (`%FF`, `%E0%80`), are 400 VALIDATION_ERROR with `details` naming
// where. Routes that take text exactly as sent opt out with `config: { rawText: true }` and deal with it
// themselves: the heartbeat (stored byte for byte, NUL and all) and the call-status call endpoints
// (always 200 text). URLs the router cannot decode, or with a path segment over its limit, are 400 in
// the contract's error body instead of the framework's own (see frameworkErrorHandler).
import { Stream } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../platform/errors.js';
import { errorBody } from './error-body.js';
import { SECURITY_HEADERS } from './security-headers.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes its text exactly as sent and handles NUL itself; the input guard leaves it alone. */
    rawText?: boolean;
  }
}

// eslint-disable-next-line no-control-regex -- NUL is what it looks for
const SUSPECT = /[\u0000\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What is wrong with a text, if anything (one cheap test for the common case of nothing). */
function textProblem(text: string): string | undefined {
  if (!SUSPECT.test(text)) return undefined;
  if (text.includes('\u0000')) return 'must not contain NUL (\\u0000)';
  return LONE_SURROGATE.test(text) ? 'must be valid Unicode (it has a lone surrogate)' : undefined;
}

interface Step {
  key: string;
  parent: Step | undefined;
}

/** Keys are shown JSON-escaped, so a NUL in a key is readable in the answer. */
const pathOf = (step: Step | undefined): string => {
  const keys: string[] = [];
  for (let s = step; s; s = s.parent) keys.unshift(JSON.stringify(s.key).slice(1, -1));
  return keys.join('.');
};

/**
 * Parsed data: JSON bodies, query and path maps (the query parser's objects have a bare prototype of
 * their own, so "plain" cannot be judged by the prototype). An upload's body is its request stream or a
 * Buffer, whose object graph (socket, server, cycles) must not be walked: that ran the process out of
 * memory on the first firmware upload.
 */
function isParsedObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !ArrayBuffer.isView(value) && !(value instanceof Stream);
}

/** The first bad text in a parsed value: walked with a stack, so 10,000-deep nesting is no problem. */
function findBadText(root: unknown): { path: string; message: string } | undefined {
  const stack: Array<{ value: unknown; at: Step | undefined }> = [{ value: root, at: undefined }];
  while (stack.length > 0) {
    const { value, at } = stack.pop()!;
    if (typeof value === 'string') {
      const message = textProblem(value);
      if (message) return { path: pathOf(at), message };
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) stack.push({ value: value[i], at: { key: String(i), parent: at } });
    } else if (isParsedObject(value)) {
      for (const key of Object.keys(value)) {
        const step = { key, parent: at };
        const message = textProblem(key);
        if (message) return { path: pathOf(step), message: `the name ${message}` };
        stack.push({ value: value[key], at: step });
      }
    }
  }
  return undefined;
}

/** A query parameter whose percent-escapes do not decode as UTF-8 (the parser keeps those as typed). */
function badQueryEscape(url: string): string | undefined {
  const start = url.indexOf('?');
  if (start < 0 || !url.includes('%', start)) return undefined;
  for (const part of url.slice(start + 1).split('&')) {
    try {
      for (const run of part.match(/(?:%[0-9A-Fa-f]{2})+/g) ?? []) decodeURIComponent(run);
    } catch {
      return part.split('=')[0]!.replace(/%[0-9A-Fa-f]{2}/g, '?').slice(0, 64) || 'query';
    }
  }
  return undefined;
}

const PART_NAMES = { query: 'query', params: 'path', body: 'body' } as const;

function refuse(part: string, path: string, message: string): AppError {
  const where = path || part;
  return new AppError('VALIDATION_ERROR', `Invalid ${part}: ${where}: ${message}`, { details: [{ path: where, message }] });
}

export const inputGuardPlugin = fp(
  async (app: FastifyInstance) => {
    // preValidation: after the body is parsed, before the route's schema (and any database) sees it.
    app.addHook('preValidation', async (request) => {
      if (request.routeOptions.config.rawText) return;
      const escape = badQueryEscape(request.url);
      if (escape !== undefined) throw refuse('query', escape, 'a percent-escape that is not UTF-8');
      for (const source of ['params', 'query', 'body'] as const) {
        const bad = findBadText(request[source]);
        if (bad) throw refuse(PART_NAMES[source], bad.path, bad.message);
      }
    });
  },
  { name: 'input-guard' },
);

/**
 * Fastify answers URLs its router cannot decode (`/agents/%FF`) and over-long path segments with a body
 * of its own, without a request id; this answers them with the contract's 400. An app whose routes must
 * answer something else (the call-status call endpoints) returns that text from `plainText`.
 */
export function frameworkErrorHandler(plainText?: (request: FastifyRequest) => string | undefined): NonNullable<FastifyServerOptions['frameworkErrors']> {
  return (error: { code?: string }, request: FastifyRequest, reply: FastifyReply) => {
    reply.header('x-request-id', request.id);
    reply.headers(SECURITY_HEADERS); // no hook runs for these answers
    if (request.headers.upgrade !== undefined) {
      // An upgrade request's socket left the HTTP parser: nothing else would end it (see websocket-route.ts).
      reply.header('connection', 'close');
      reply.raw.once('finish', () => request.raw.socket.end());
    }
    const text = plainText?.(request);
    if (text !== undefined) return reply.code(200).type('text/plain; charset=utf-8').send(text);
    const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path segment is too long' : 'the path is not valid percent-encoded UTF-8';
    return reply.code(400).send(errorBody('VALIDATION_ERROR', `Invalid path: ${message}`, request.id, [{ path: 'path', message }]));
  };
}
