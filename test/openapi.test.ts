// The API description a client generator or a human reads: valid, complete, and rendered at /docs.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServerApp } from '../src/apps/server/build-app.js';
import { createLogger } from '../src/platform/logger.js';
import { buildTestApp, testConfig, testSecrets, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

type OpenApiDoc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

async function fetchDocument(): Promise<OpenApiDoc> {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  return res.json() as OpenApiDoc;
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3 document', async () => {
    const doc = await fetchDocument();
    expect(doc.openapi).toMatch(/^3\./);
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('documents the WebSocket endpoints with who may open them', async () => {
    const doc = (await fetchDocument()) as unknown as { paths: Record<string, Record<string, { 'x-access'?: string; description?: string }>> };
    const access = Object.fromEntries(['/api/v1/agent/ws', '/api/v1/terminal', '/api/v1/proxy/{tunnel_id}'].map((p) => [p, doc.paths[p]?.get?.['x-access']]));
    // The proxy socket checks write itself, after letting a read user reach their own view-only desktop (issue 60).
    expect(access).toEqual({ '/api/v1/agent/ws': 'agent', '/api/v1/terminal': 'session', '/api/v1/proxy/{tunnel_id}': 'read' });
    expect(doc.paths['/api/v1/terminal']?.get?.description).toContain('426');
  });

  it('lists every route of the app with the error body for 4xx and 5xx', async () => {
    const doc = await fetchDocument();
    const routes = t.app.declaredRoutes.filter((r) => !r.hidden && r.method !== 'HEAD');
    expect(routes.length).toBeGreaterThanOrEqual(3);
    for (const route of routes) {
      const path = route.url.replace(/:(\w+)/g, '{$1}');
      const operation = doc.paths[path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.url} is documented`).toBeDefined();
      expect(Object.keys(operation!.responses)).toEqual(expect.arrayContaining(['4XX', '5XX']));
    }
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz', '/api/v1/openapi.json']));
  });
});

describe('interactive docs', () => {
  it('serves Swagger UI at /docs with its assets and the document', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs' });
    const html = page.statusCode === 302 ? await t.app.inject({ method: 'GET', url: page.headers.location! }) : page;
    expect(html.statusCode).toBe(200);
    expect(html.headers['content-type']).toContain('text/html');
    const assets = [...html.body.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(expect.arrayContaining(['/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js']));
    for (const asset of assets) {
      const res = await t.app.inject({ method: 'GET', url: asset });
      expect(res.statusCode, asset).toBe(200);
    }
    // The initializer is what points the UI at the document.
    const initializer = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(initializer.body).toContain('json');
    const json = await t.app.inject({ method: 'GET', url: '/docs/json' });
    expect(json.json()).toMatchObject({ openapi: expect.stringMatching(/^3\./) });
  });
});

describe('route access declarations', () => {
  it('declares who may call every route', () => {
    const undeclared = t.app.declaredRoutes.filter((r) => r.access === undefined);
    expect(undeclared).toEqual([]);
  });

  it('refuses to start an app with a route that declares nothing', async () => {
    const app = await buildServerApp({
      config: await testConfig(),
      db: t.db,
      logger: createLogger({ level: 'silent' }),
      secrets: testSecrets(),
    });
    app.get('/api/v1/forgotten', async () => ({ ok: true }));
    await expect(app.ready()).rejects.toThrow('routes without an access declaration (config.access): GET /api/v1/forgotten');
    await app.close().catch(() => undefined);
  });
});
