// Every list of both apps pages the same way (issue 29): `limit` and an opaque `cursor` in the query,
// the next page's URL in a `Link: <…>; rel="next"` header (RFC 8288) only when more items exist, and the
// body the same JSON array as ever. Lists the spec says answer "all" still do without `limit`, streamed
// in chunks (list-stream.ts) so a long list never holds the event loop.
//
// A cursor is base64url JSON `{k, f}`: `k` the position (the sort key values of the last item, checked
// against the list's key types in src/db/keyset.ts) and `f` a fingerprint of the path and every query
// parameter but `limit`, `cursor` and credentials. A cursor used with another path, sort or filter is
// refused (400), not misread. An edited position inside a matching cursor is harmless: it only moves
// the start within the same list, and the caller's scope and filters come from the request every time.
// Other APIs' paging parameters (`offset`, `page`, …) are refused too (issue 57): ignored, they had a
// client read the first page again and again, believing it paged.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { z } from 'zod';
import { AppError } from '../platform/errors.js';
import type { PageKey } from '../platform/paging.js';
import type { ListSource } from './list-source.js';
import { streamList } from './list-stream.js';

export interface ListSpec {
  /** Items answered without `limit`: a page of this many, or 'all' (the whole list, streamed). */
  defaultLimit: number | 'all';
  max: number;
  /** The list's order in words, for its OpenAPI description. */
  order: string;
}

/** A list the spec says answers everything: all without `limit`, at most 1000 per page with it. */
export const allByDefault = (order: string): ListSpec => ({ defaultLimit: 'all', max: 1000, order });

/** A history the contract pages by default (events, audit, activity, backups): newest first. */
export const newestFirstList = (defaultLimit: number, order = 'newest first (time, then id, descending)'): ListSpec => ({ defaultLimit, max: 1000, order });

/** Parameters that never identify a list: the page size, the position and credentials. */
const NOT_IDENTIFYING = new Set(['limit', 'cursor', 'api_key', 'token']);
const MAX_CURSOR_CHARS = 4096;
const CURSOR_SHAPE = z.object({ k: z.array(z.union([z.string(), z.number()])).min(1).max(8), f: z.string().max(64) });

export interface DecodedCursor {
  position: PageKey;
  fingerprint: string;
}

function limitText(spec: ListSpec): string {
  const absent = spec.defaultLimit === 'all' ? 'Absent: the whole list.' : `Default ${spec.defaultLimit}.`;
  return `Items per page: an integer ≥ 1; larger than ${spec.max} is clamped to ${spec.max}. ${absent}`;
}

/** `limit` and `cursor`, to spread into a route's querystring schema. */
export function pageQuery(spec: ListSpec) {
  const limit = z.coerce
    .number()
    .int()
    .min(1)
    .transform((v) => Math.min(v, spec.max));
  return {
    limit: (spec.defaultLimit === 'all' ? limit.optional() : limit.default(spec.defaultLimit)).describe(limitText(spec)),
    cursor: z
      .string()
      .max(MAX_CURSOR_CHARS)
      .transform((text, ctx) => {
        const decoded = decodeCursor(text);
        if (decoded === undefined) ctx.addIssue({ code: 'custom', message: 'not a cursor of this list (take it from the Link header)' });
        return decoded ?? z.NEVER;
      })
      .optional()
      .describe('Opaque position from the previous answer\'s `Link: <…>; rel="next"`; absent: the first page'),
  };
}

/** Paging parameters of other APIs, and what a list here takes instead. */
const FOREIGN_PAGING: Readonly<Record<string, 'cursor' | 'limit'>> = { offset: 'cursor', page: 'cursor', skip: 'cursor', per_page: 'limit', page_size: 'limit' };

function refuseForeignPaging(request: FastifyRequest): void {
  const given = Object.keys(request.query as Record<string, unknown>).filter((name) => Object.hasOwn(FOREIGN_PAGING, name));
  if (given.length === 0) return;
  const instead = (name: string) =>
    FOREIGN_PAGING[name] === 'cursor' ? 'lists page with `cursor`: follow the `Link: <…>; rel="next"` header of each answer' : 'the page size is `limit`';
  throw new AppError('VALIDATION_ERROR', `Invalid query: ${given[0]}: not a parameter of this list; ${instead(given[0]!)}`, {
    details: given.map((name) => ({ path: name, message: `not a parameter of this list; ${instead(name)}` })),
  });
}

/** A route whose query takes `cursor` (pageQuery) is a list. */
const isList = (route: RouteOptions) => {
  const shape = (route.schema?.querystring as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape !== undefined && 'cursor' in shape;
};

/** Every list of the app refuses `offset`, `page` and the like (400 naming `cursor` or `limit`), before its handler runs. */
export const listPagingGuardPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => {
      if (!isList(route)) return;
      const before = route.preValidation === undefined ? [] : [route.preValidation].flat();
      route.preValidation = [...before, async (request: FastifyRequest) => refuseForeignPaging(request)];
    });
  },
  { name: 'list-paging-guard' },
);

/** The paging paragraph of a list operation's OpenAPI description. */
export function listDescription(spec: ListSpec, before = ''): string {
  const all =
    spec.defaultLimit === 'all'
      ? 'Without `limit` the answer is the whole list (streamed).'
      : `Without \`limit\`, the first ${spec.defaultLimit}.`;
  const paging =
    `Ordered ${spec.order}. ${all} With \`limit\` (at most ${spec.max}; more is clamped) each page is at most that many items, and when ` +
    'more follow the answer carries `Link: <URL>; rel="next"`: the same request with a `cursor`, which answers the next page. Follow ' +
    "it as it is; a cursor used with another path, sort or filter is 400, and so are `offset`, `page`, `skip`, `per_page` and `page_size`. " +
    "Pages are positions in the list's order, not a snapshot: " +
    'an item whose sort key changes while you page may appear twice or not at all.';
  return before ? `${before}\n\n${paging}` : paging;
}

/** A list operation's 200 response: the JSON array, and the Link header it may carry. */
export function listResponse<T extends z.ZodType>(item: T, spec: ListSpec) {
  return z.array(item).meta({
    description: spec.defaultLimit === 'all' ? 'The whole list, or one page of it with `limit`' : 'One page of the list',
    headers: { link: { type: 'string', description: '`<URL of the next page>; rel="next"`, present only when more items follow' } },
  });
}

function decodeCursor(text: string): DecodedCursor | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const parsed = CURSOR_SHAPE.safeParse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
    return parsed.success ? { position: parsed.data.k, fingerprint: parsed.data.f } : undefined;
  } catch {
    return undefined;
  }
}

/** The request's path and identifying query parameters, hashed: what a cursor belongs to. */
function listFingerprint(request: FastifyRequest): string {
  const [path, query = ''] = request.url.split('?', 2) as [string, string?];
  const params = [...new URLSearchParams(query)].filter(([name]) => !NOT_IDENTIFYING.has(name)).sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1));
  return createHash('sha256').update(JSON.stringify([path, params])).digest('base64url').slice(0, 16);
}

/** `<path?query with cursor>; rel="next"`: the request again, credentials left out, at the next position. */
function nextLink(request: FastifyRequest, position: PageKey, fingerprint: string): string {
  const [path, query = ''] = request.url.split('?', 2) as [string, string?];
  const params = new URLSearchParams(query);
  for (const name of ['api_key', 'token']) params.delete(name);
  params.set('cursor', Buffer.from(JSON.stringify({ k: position, f: fingerprint })).toString('base64url'));
  return `<${path}?${params.toString()}>; rel="next"`;
}

/**
 * Answers the list: one page (Link header when more follow), or, for an "all" list asked without
 * `limit`, the whole list streamed from the cursor's position (or the start).
 */
export async function sendList<Row, Dto>(request: FastifyRequest, reply: FastifyReply, spec: ListSpec, source: ListSource<Row, Dto>): Promise<Dto[]> {
  const query = request.query as { limit?: number; cursor?: DecodedCursor };
  const fingerprint = listFingerprint(request);
  if (query.cursor && query.cursor.fingerprint !== fingerprint) {
    throw new AppError('VALIDATION_ERROR', 'The cursor belongs to another list, sort or filter: start again without it', {
      details: [{ path: 'cursor', message: 'made for another list, sort or filter' }],
    });
  }
  const after = query.cursor?.position ?? null;
  if (query.limit === undefined && spec.defaultLimit === 'all') return (await streamList(reply, source, after)) as never;
  const limit = query.limit ?? (spec.defaultLimit as number);
  const page = await source.fetch({ limit, after });
  if (page.next) reply.header('link', nextLink(request, page.next, fingerprint));
  return page.items.map((row) => source.dto(row));
}
