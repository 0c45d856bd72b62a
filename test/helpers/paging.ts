// Paging through a list as a client would: follow `Link: <…>; rel="next"` until there is none. And a
// fast way to put thousands of agents in the database (one INSERT from arrays, not thousands of calls).
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { expect } from 'vitest';
import type { Database } from '../../src/db/schema.js';

type Injected = { statusCode: number; body: string; headers: Record<string, unknown> };

/** The target of the response's rel="next" link, or undefined when there is none. */
export function nextLink(res: Injected): string | undefined {
  const header = res.headers.link;
  if (header === undefined) return undefined;
  expect(typeof header, 'one Link header').toBe('string');
  const match = /^<([^>]+)>;\s*rel="next"$/.exec(header as string);
  expect(match, `Link header ${String(header)}`).not.toBeNull();
  return match![1];
}

export interface Walk<T> {
  items: T[];
  /** Each page's response body, in order. */
  bodies: string[];
  /** The URL of each request made, the first one included. */
  urls: string[];
}

/** Requests `url`, then every rel="next" link; each answer must be 200 with a JSON array. */
export async function walkPages<T = Record<string, unknown>>(
  app: FastifyInstance,
  url: string,
  headers: Record<string, string> = {},
  maxPages = 1000,
): Promise<Walk<T>> {
  const walk: Walk<T> = { items: [], bodies: [], urls: [] };
  let next: string | undefined = url;
  while (next !== undefined) {
    expect(walk.urls.length, `more than ${maxPages} pages from ${url}`).toBeLessThan(maxPages);
    walk.urls.push(next);
    const res = await app.inject({ method: 'GET', url: next, headers });
    expect(res.statusCode, `${next}: ${res.body.slice(0, 300)}`).toBe(200);
    const page = JSON.parse(res.body) as T[];
    expect(Array.isArray(page)).toBe(true);
    walk.items.push(...page);
    walk.bodies.push(res.body);
    next = nextLink(res);
    if (next !== undefined) expect(page.length, 'a page with a next link is not empty').toBeGreaterThan(0);
  }
  return walk;
}

/** The bodies of several pages joined into the one array they make together, as text. */
export function concatenatedBodies(bodies: readonly string[]): string {
  return `[${bodies
    .map((b) => b.slice(1, -1))
    .filter((b) => b !== '')
    .join(',')}]`;
}

/**
 * Walking `url` with `limit` takes as many pages as `limit` makes of the list `wholeUrl` answers, and
 * their bodies joined are that answer byte for byte. Returns the whole list.
 */
export async function expectPagesJoinToWhole(
  app: FastifyInstance,
  wholeUrl: string,
  url: string,
  limit: number,
  headers: Record<string, string> = {},
): Promise<Array<Record<string, unknown>>> {
  const whole = await app.inject({ method: 'GET', url: wholeUrl, headers });
  expect(whole.statusCode, whole.body).toBe(200);
  const all = JSON.parse(whole.body) as Array<Record<string, unknown>>;
  expect(all.length, `${wholeUrl} has more than one page of ${limit}`).toBeGreaterThan(limit);
  const walk = await walkPages(app, `${url}${url.includes('?') ? '&' : '?'}limit=${limit}`, headers);
  expect(walk.urls.length, url).toBe(Math.ceil(all.length / limit));
  expect(concatenatedBodies(walk.bodies), url).toBe(whole.body);
  return all;
}

export interface BulkAgent {
  id: string;
  name: string;
  hostname: string;
  platform: 'freebsd' | 'linux' | 'windows' | null;
  customer_id: number | null;
  agent_version: string | null;
  last_heartbeat: Date | null;
}

/** Inserts the agents in one statement (unnest over arrays: the portable bulk path on PGlite too). */
export async function insertAgents(db: Kysely<Database>, agents: readonly BulkAgent[]): Promise<void> {
  const column = <K extends keyof BulkAgent>(key: K) => agents.map((a) => a[key]);
  await sql`
    insert into agents (id, name, hostname, platform, customer_id, agent_version, last_heartbeat)
    select * from unnest(
      ${column('id')}::text[], ${column('name')}::text[], ${column('hostname')}::text[], ${column('platform')}::text[],
      ${column('customer_id')}::int[], ${column('agent_version')}::text[],
      ${column('last_heartbeat').map((d) => d?.toISOString() ?? null)}::timestamptz[])`.execute(db);
}
