// The error model as a client sees it: every failure has the contract's body and the request id.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../src/platform/errors.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, bearer } from './helpers/identity.js';

// Probe routes exercise framework paths (body parsing, validation, thrown errors) that no feature
// route of this stage takes a body for; they go through exactly the same plugins as feature routes.
function addProbeRoutes(app: FastifyInstance): void {
  const zApp = app.withTypeProvider<ZodTypeProvider>();
  zApp.post(
    '/api/v1/probe/echo',
    {
      config: { access: 'public' },
      schema: {
        body: z.object({ name: z.string().min(1), count: z.number().int() }),
        querystring: z.object({ limit: z.coerce.number().int().min(1).optional() }),
      },
    },
    async (request) => request.body,
  );
  zApp.get('/api/v1/probe/boom', { config: { access: 'public' } }, async () => {
    throw new Error('connect ECONNREFUSED 10.0.0.5:5432 password=hunter2');
  });
  zApp.get('/api/v1/probe/conflict', { config: { access: 'public' } }, async () => {
    throw new AppError('CONFLICT', 'Customer number 1001 already exists');
  });
}

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ extend: addProbeRoutes });
});
afterAll(() => t.close());

function expectErrorBody(res: { json(): unknown; headers: Record<string, unknown> }, code: string) {
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ code, request_id: res.headers['x-request-id'] });
  expect(typeof body.error).toBe('string');
  expect(String(body.error).length).toBeGreaterThan(0);
  return body;
}

describe('error responses', () => {
  it('answers an unknown route with 404 NOT_FOUND and never echoes its query string', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/no-such-thing?api_key=secret123' });
    expect(res.statusCode).toBe(404);
    const body = expectErrorBody(res, 'NOT_FOUND');
    expect(body.error).toBe('Route GET /api/v1/no-such-thing not found');
    expect(res.body).not.toContain('secret123');
  });

  it('answers malformed JSON with 400 INVALID_JSON', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/probe/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"name": "fw-01", ',
    });
    expect(res.statusCode).toBe(400);
    expectErrorBody(res, 'INVALID_JSON');
  });

  it('answers a body over 1 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/probe/echo',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024), count: 1 }),
    });
    expect(res.statusCode).toBe(413);
    expectErrorBody(res, 'PAYLOAD_TOO_LARGE');
  });

  it('accepts a body just under the limit', async () => {
    const name = 'x'.repeat(1024 * 1024 - 100);
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo', payload: { name, count: 1 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ name, count: 1 });
  });

  it('answers a schema violation with 400 VALIDATION_ERROR and one detail per field', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo', payload: { name: '', count: 1.5 } });
    expect(res.statusCode).toBe(400);
    const body = expectErrorBody(res, 'VALIDATION_ERROR');
    const paths = (body.details as Array<{ path: string; message: string }>).map((d) => d.path).sort();
    expect(paths).toEqual(['count', 'name']);
  });

  it('reports an invalid query parameter by name', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/probe/echo?limit=0', payload: { name: 'a', count: 1 } });
    expect(res.statusCode).toBe(400);
    const body = expectErrorBody(res, 'VALIDATION_ERROR');
    expect(body.details).toEqual([{ path: 'limit', message: expect.any(String) }]);
  });

  it('answers an unsupported content type with 415', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/probe/echo',
      headers: { 'content-type': 'application/x-unknown' },
      payload: 'name=a',
    });
    expect(res.statusCode).toBe(415);
    expectErrorBody(res, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('maps an AppError code to its status', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/probe/conflict' });
    expect(res.statusCode).toBe(409);
    expect(expectErrorBody(res, 'CONFLICT').error).toBe('Customer number 1001 already exists');
  });

  it('answers a thrown error with a generic 500 that leaks nothing', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/probe/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({
      error: 'Internal server error',
      code: 'INTERNAL_ERROR',
      request_id: res.headers['x-request-id'],
    });
    expect(res.body).not.toMatch(/hunter2|ECONNREFUSED|10\.0\.0\.5|at /);
  });
});

describe('WebSocket endpoints asked without an upgrade', () => {
  it('answer 426 UPGRADE_REQUIRED with the error body and Upgrade: websocket, after the same checks', async () => {
    const token = await adminToken(t);
    const agent = await t.app.inject({ method: 'POST', url: '/api/v1/agents', headers: bearer(token), payload: { name: 'ws-plain-get' } });
    expect(agent.statusCode, agent.body).toBe(201);
    const agentId = (agent.json() as { id: string }).id;
    for (const url of ['/api/v1/terminal', `/api/v1/agent/ws?agent_id=${agentId}`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: bearer(token) });
      expect(res.statusCode, url).toBe(426);
      expect(res.headers.upgrade).toBe('websocket');
      expect(expectErrorBody(res, 'UPGRADE_REQUIRED').error).toContain('WebSocket');
    }
    // Checks still come first: no credentials is 401, an unknown agent 404.
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/terminal' })).statusCode).toBe(401);
    expectErrorBody(await t.app.inject({ method: 'GET', url: '/api/v1/agent/ws?agent_id=00000000000000aa', headers: bearer(token) }), 'NOT_FOUND');
  });
});

describe('request ids', () => {
  it('puts a generated x-request-id on every response', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/healthz' });
    const b = await t.app.inject({ method: 'GET', url: '/nowhere' });
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it("keeps a caller's plain request id and replaces a hostile one", async () => {
    const kept = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'lb-7f3a.42' } });
    expect(kept.headers['x-request-id']).toBe('lb-7f3a.42');
    const hostile = await t.app.inject({
      method: 'GET',
      url: '/nowhere',
      headers: { 'x-request-id': '<script>alert(1)</script>' },
    });
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(hostile.json()).toMatchObject({ request_id: hostile.headers['x-request-id'] });
  });
});
