// The web console's files as the server serves them at `/`: from the built directory with strict
// security headers, compressed and cacheable by content hash, index.html for client routes a browser
// reloads (SPA fallback), the contract's 404 for API paths and non-page requests, and a hint instead of
// a blank page when the console has not been built.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';

const INDEX = '<!doctype html><html><head><script type="module" src="/assets/app-3f2a.js"></script></head><body><div id="root"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;
const html = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };

describe('the built console', () => {
  let dir: string;
  let t: TestApp;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-web-'));
    await mkdir(path.join(dir, 'assets'));
    await writeFile(path.join(dir, 'index.html'), INDEX);
    await writeFile(path.join(dir, 'assets', 'app-3f2a.js'), SCRIPT);
    t = await buildTestApp({ env: { WEB_CONSOLE_DIR: dir } });
  });
  afterAll(async () => {
    await t.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves index.html at / with a strict content security policy and a style nonce of its own, never cached', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/', headers: html });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const nonce = /<meta name="csp-nonce" content="([A-Za-z0-9+/=]{24})" \/>/.exec(res.body)?.[1];
    expect(res.body.replace(/<meta name="csp-nonce"[^>]*>/, '')).toBe(INDEX);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    // WebAssembly for the session player, and nothing more: no eval(), no script from elsewhere.
    expect(csp).toContain("script-src 'self' 'wasm-unsafe-eval';");
    expect(csp).toContain(`style-src 'self' 'nonce-${nonce}';`);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers).toMatchObject({ 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY', 'referrer-policy': 'no-referrer', 'cache-control': 'no-store' });
    // A nonce is only worth something if no two answers share it.
    const again = await t.app.inject({ method: 'GET', url: '/index.html', headers: html });
    expect(again.body).toContain('<meta name="csp-nonce"');
    expect(again.body).not.toContain(nonce);
    // Assets keep the policy without any nonce.
    const assetPolicy = (await t.app.inject({ method: 'GET', url: '/assets/app-3f2a.js' })).headers['content-security-policy'];
    expect(assetPolicy).toContain("style-src 'self';");
    expect(assetPolicy).toContain("script-src 'self';");
  });

  it('serves hashed assets compressed and cacheable for good, and answers 304 to a matching etag', async () => {
    const url = '/assets/app-3f2a.js';
    const br = await t.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers).toMatchObject({ 'content-encoding': 'br', 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable' });
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(SCRIPT);
    expect(br.rawPayload.length).toBeLessThan(SCRIPT.length / 10);
    const gzip = await t.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
    expect(gunzipSync(gzip.rawPayload).toString()).toBe(SCRIPT);
    const plain = await t.app.inject({ method: 'GET', url });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(SCRIPT);
    const again = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': String(plain.headers.etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('answers a reloaded client route with index.html, and everything else with the contract 404', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/agents/0123456789abcdef/metrics?range=7d', headers: html });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<div id="root"></div>');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");

    expectError(await t.app.inject({ method: 'GET', url: '/agents/0123456789abcdef' }), 404, 'NOT_FOUND');
    expectError(await t.app.inject({ method: 'GET', url: '/assets/missing-1234.js', headers: html }), 404, 'NOT_FOUND');
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/no-such-route', headers: html }), 404, 'NOT_FOUND');
    expectError(await t.app.inject({ method: 'GET', url: '/api', headers: html }), 404, 'NOT_FOUND');
    // The API and the docs are untouched.
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).statusCode).toBe(200);
    expectError(await t.app.inject({ method: 'GET', url: '/api/v1/agents', headers: html }), 401, 'UNAUTHORIZED');
  });

  it('never lists or reads beyond the built files', async () => {
    for (const url of ['/../package.json', '/assets/../../package.json', '/%2e%2e/package.json', '/assets/']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.body).not.toContain('"dependencies"');
    }
  });
});

describe('a server whose console was not built', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { WEB_CONSOLE_DIR: path.join(os.tmpdir(), 'rmm-no-such-console') } });
  });
  afterAll(() => t.close());

  it('says how to build it instead of a blank page, and still serves the API', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/', headers: html });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build');
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});
