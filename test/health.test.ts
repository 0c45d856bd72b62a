import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { testDbKind } from './helpers/db.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

describe('health', () => {
  it('reports liveness without credentials', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('reports readiness with the database in use', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', database: testDbKind() });
  });

  it('answers 503 DATABASE_UNAVAILABLE once the database is gone, while liveness stays up', async () => {
    await t.db.close();
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      error: 'Database is not reachable',
      code: 'DATABASE_UNAVAILABLE',
      request_id: res.headers['x-request-id'],
    });
    // Probes and clients are told when to look again.
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
