// Credentials in URLs and headers (WebSocket clients must put them in the query) never reach the log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ captureLogs: true });
});
afterAll(() => t.close());

describe('request logging', () => {
  it('logs requests without api_key, token or credential header values', async () => {
    // A fixed request id keeps generated ids out of the search for the short value "abc".
    const headers = { 'x-request-id': 'log-test-1', authorization: 'Bearer abc', 'x-api-key': 'secret123' };
    await t.app.inject({ method: 'GET', url: '/healthz?api_key=secret123&token=abc', headers });
    await t.app.inject({ method: 'GET', url: '/api/v1/missing?token=abc&api_key=secret123', headers });

    const lines = t.logs();
    const urls = lines.map((l) => JSON.parse(l) as { req?: { url: string } }).flatMap((l) => (l.req ? [l.req.url] : []));
    expect(urls).toEqual([
      '/healthz?api_key=[redacted]&token=[redacted]',
      '/api/v1/missing?token=[redacted]&api_key=[redacted]',
    ]);
    for (const line of lines) {
      expect(line).not.toContain('secret123');
      expect(line).not.toContain('abc');
    }
  });
});
