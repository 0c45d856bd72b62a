// One set of security headers on every answer (issue 57, item 6): Swagger UI at /docs had no CSP and no
// X-Frame-Options, and JSON answers no `X-Content-Type-Options: nosniff`. Every kind of answer is asked
// for here: the docs and their files, JSON from a route, errors from the handler, a hook, the router and
// the not-found handler, and the call-status service's answers; the console's own page keeps its nonce.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Response } from 'light-my-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { startCallstatus, type CallstatusTest } from './helpers/callstatus.js';
import { adminToken, bearer } from './helpers/identity.js';

let t: TestApp;
let consoleDir: string;
let admin: Record<string, string>;

beforeAll(async () => {
  consoleDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-headers-web-'));
  await writeFile(path.join(consoleDir, 'index.html'), '<!doctype html><html><head><title>RMM</title></head><body><div id="root"></div></body></html>');
  t = await buildTestApp({ env: { WEB_CONSOLE_DIR: consoleDir } });
  admin = bearer(await adminToken(t));
});
afterAll(async () => {
  await t?.close();
  await rm(consoleDir, { recursive: true, force: true });
});

/** The policy every answer carries: nothing from elsewhere, no inline code, no framing. */
function expectSecured(res: Response, what: string): void {
  expect(res.headers['x-content-type-options'], what).toBe('nosniff');
  expect(res.headers['x-frame-options'], what).toBe('DENY');
  expect(res.headers['referrer-policy'], what).toBe('no-referrer');
  const csp = String(res.headers['content-security-policy']);
  expect(csp, what).toContain("default-src 'none'");
  expect(csp, what).toContain("script-src 'self'");
  expect(csp, what).toContain("frame-ancestors 'none'");
  expect(csp, what).not.toContain('unsafe-inline');
  // 'wasm-unsafe-eval' (the console's page: the session player) compiles WebAssembly only, no eval().
  expect(csp, what).not.toContain("'unsafe-eval'");
}

describe('security headers', () => {
  it('are on Swagger UI at /docs, its files and the document it shows', async () => {
    for (const url of ['/docs', '/docs/', '/docs/static/index.html', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-ui.css', '/docs/static/swagger-initializer.js', '/docs/json', '/api/v1/openapi.json']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBeLessThan(400);
      expectSecured(res, url);
    }
    // The page's policy is the console's, without a nonce: Swagger UI loads only its own files.
    const page = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.headers['content-security-policy']).toContain("style-src 'self';");
    expect(page.body).not.toMatch(/<script>(?!\s*<\/script>)|<style>/);
  });

  it('are on JSON answers and every kind of error', async () => {
    const answers: Array<[string, Response, number]> = [
      ['a JSON list', await t.app.inject({ method: 'GET', url: '/api/v1/customers', headers: admin }), 200],
      ['healthz', await t.app.inject({ method: 'GET', url: '/healthz' }), 200],
      ['no credentials', await t.app.inject({ method: 'GET', url: '/api/v1/customers' }), 401],
      ['a validation error', await t.app.inject({ method: 'GET', url: '/api/v1/customers/abc', headers: admin }), 400],
      ['bad JSON', await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: '{' }), 400],
      ['an unknown API route', await t.app.inject({ method: 'GET', url: '/api/v1/no-such-route' }), 404],
      ['a URL the router cannot decode', await t.app.inject({ method: 'GET', url: '/api/v1/agents/%FF' }), 400],
    ];
    for (const [what, res, status] of answers) {
      expect(res.statusCode, `${what}: ${res.body}`).toBe(status);
      expect(res.headers['content-type'], what).toMatch(/^application\/json/);
      expectSecured(res, what);
    }
  });

  it('keep the console page\'s own policy with its style nonce, sent once', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expectSecured(page, 'the console page');
    const nonce = /<meta name="csp-nonce" content="([^"]+)"/.exec(page.body)?.[1];
    expect(page.headers['content-security-policy']).toContain(`style-src 'self' 'nonce-${nonce}';`);
    expect([page.headers['content-security-policy']].flat()).toHaveLength(1);
  });
});

describe('security headers of the call-status service', () => {
  let cs: CallstatusTest;
  beforeAll(async () => {
    cs = await startCallstatus();
  });
  afterAll(() => cs?.close());

  it('are on its JSON answers and errors too', async () => {
    for (const [url, status] of [['/api/openapi.json', 200], ['/api/admin/users', 401], ['/api/nothing-here', 404]] as const) {
      const res = await cs.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(status);
      expectSecured(res, url);
    }
  });
});
