// Every list operation of both apps says how it pages (issue 29, item 5): `limit` with its maximum (and
// default), `cursor`, and the `Link` response header; the few arrays that are not paged say why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { startCallstatus, type CallstatusTest } from './helpers/callstatus.js';
import { adminToken, bearer } from './helpers/identity.js';

type Operation = {
  description?: string;
  parameters?: Array<{ name: string; in: string; description?: string }>;
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema?: { type?: string } }> }>;
};
type Doc = { paths: Record<string, Record<string, Operation>> };

/** Arrays that are not paged lists, and where the reason is written. */
const NOT_LISTS: Record<string, string> = {
  // Time-bucketed: at most 10,000 buckets, chosen by range and bucket width.
  '/api/v1/agents/{id}/metrics/summary': 'Not paged',
  // One value per metric and label.
  '/api/v1/agents/{id}/metrics/latest': 'Not paged',
  // The agent's live answer, read from the firewall on each request.
  '/api/v1/agents/{id}/vpn/peers': 'Not paged',
  // The open tunnels of one agent, in memory, bounded by the proxy port range.
  '/api/v1/agents/{id}/tunnels': 'Not paged',
  // At most one per check of the agent's set.
  '/api/v1/agents/{id}/check-overrides': 'Not paged',
  // One entry per distinct tag, at most 20 per agent.
  '/api/v1/agents/tags': 'Not paged',
  // One per sign-in, gone when it ends or expires.
  '/api/v1/auth/sessions': 'Not paged',
  '/api/v1/users/{id}/sessions': 'Not paged',
  // A user's own passkeys, at most 25.
  '/api/v1/auth/passkeys': 'Not paged',
  // Single sign-on providers: a handful an admin configured.
  '/api/v1/auth/sso/providers': 'Not paged',
  '/api/v1/sso/providers': 'Not paged',
};

let rmm: TestApp;
let callstatus: CallstatusTest;
beforeAll(async () => {
  rmm = await buildTestApp();
  callstatus = await startCallstatus();
});
afterAll(async () => {
  await rmm?.close();
  await callstatus?.close();
});

function arrayOperations(doc: Doc): Array<[string, Operation]> {
  return Object.entries(doc.paths).flatMap(([path, ops]) => {
    const get = ops.get;
    const schema = get?.responses['200']?.content?.['application/json']?.schema;
    return get && schema?.type === 'array' ? [[path, get] as [string, Operation]] : [];
  });
}

function expectPaged(path: string, op: Operation): void {
  const param = (name: string) => op.parameters?.find((p) => p.in === 'query' && p.name === name);
  expect(param('limit')?.description, `${path} limit`).toMatch(/clamped to \d+/);
  expect(param('cursor')?.description, `${path} cursor`).toMatch(/Link/);
  expect(op.responses['200']?.headers?.link, `${path} Link header`).toBeDefined();
  expect(op.description, `${path} description`).toMatch(/Ordered .*rel="next"/s);
}

describe('list operations in the OpenAPI documents', () => {
  it('the RMM server: every array answer pages with limit, cursor and Link, or says why not', async () => {
    const doc = (await rmm.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as Doc;
    const arrays = arrayOperations(doc);
    expect(arrays.length).toBeGreaterThan(15);
    for (const [path, op] of arrays) {
      if (path in NOT_LISTS) expect(op.description ?? '', path).toContain(NOT_LISTS[path]);
      else expectPaged(path, op);
    }
    const limit = (path: string) => doc.paths[path]?.get?.parameters?.find((p) => p.name === 'limit')?.description;
    expect(limit('/api/v1/agents')).toContain('Absent: the whole list');
    expect(limit('/api/v1/agents/events')).toContain('Default 100');
    expect(limit('/api/v1/agents/{id}/backups')).toContain('Default 50');
    expect(limit('/api/v1/agents/{id}/metrics')).toMatch(/clamped to 100000\. Default 1000/);
    expect(doc.paths['/api/v1/hub/status']?.get?.description).toContain('Not a paged list');
  });

  it('the call-status service: its admin lists and attendance page the same way', async () => {
    const doc = (await callstatus.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
    const arrays = arrayOperations(doc);
    expect(arrays.map(([path]) => path).sort()).toEqual(
      ['/api/admin/activity', '/api/admin/assignments', '/api/admin/colors', '/api/admin/devices', '/api/admin/state', '/api/admin/users', '/api/attendance'],
    );
    for (const [path, op] of arrays) expectPaged(path, op);
  });
});

// Issue 57: `?offset=` and `?page=` were ignored, so a client paging that way read the first page again
// and again. Every list of both apps refuses them, whatever its path parameters (before its handler).
describe("other APIs' paging parameters", () => {
  const lists = (doc: Doc) => arrayOperations(doc).filter(([path]) => !(path in NOT_LISTS));
  const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '1');

  async function expectRefused(app: TestApp['app'], url: string, headers: Record<string, string>, param: string, instead: RegExp) {
    const res = await app.inject({ method: 'GET', url, headers });
    expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
    const body = res.json() as { error: string; code: string; request_id: string; details: Array<{ path: string; message: string }> };
    expect(body, url).toMatchObject({ code: 'VALIDATION_ERROR', request_id: expect.any(String), details: [{ path: param }] });
    expect(body.error, url).toMatch(instead);
  }

  it('the RMM server: every list answers 400 naming `cursor` (or `limit`); other routes are unaffected', async () => {
    const headers = bearer(await adminToken(rmm));
    const doc = (await rmm.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json() as Doc;
    for (const [path] of lists(doc)) {
      await expectRefused(rmm.app, `${concrete(path)}?offset=100`, headers, 'offset', /`cursor`/);
      await expectRefused(rmm.app, `${concrete(path)}?page=2&limit=10`, headers, 'page', /`cursor`/);
    }
    await expectRefused(rmm.app, '/api/v1/agents?per_page=50', headers, 'per_page', /`limit`/);
    // A list still pages with limit and cursor; routes that are not lists do not look at these names.
    expect((await rmm.app.inject({ method: 'GET', url: '/api/v1/customers?limit=1', headers })).statusCode).toBe(200);
    expect((await rmm.app.inject({ method: 'GET', url: '/api/v1/hub/status?page=2', headers })).statusCode).toBe(200);
    expect((await rmm.app.inject({ method: 'GET', url: '/healthz?offset=1' })).statusCode).toBe(200);
  });

  it('the call-status service: every list answers 400 naming `cursor`', async () => {
    const headers = { authorization: `Bearer ${callstatus.adminToken!}` };
    const doc = (await callstatus.app.inject({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
    for (const [path] of lists(doc)) await expectRefused(callstatus.app, `${path}?offset=5`, headers, 'offset', /`cursor`/);
  });
});
