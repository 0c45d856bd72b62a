// Timestamps at the edges of the calendar in query filters: year 0000 (valid RFC 3339 syntax, but a
// year PostgreSQL does not have) is a 400 in the contract's error body, and far-past or far-future
// ranges answer normally; none of them may reach the database as an error (a 500).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer } from './helpers/identity.js';

let t: TestApp;
let token: string;
let agentId: string;

beforeAll(async () => {
  t = await buildTestApp({});
  token = await adminToken(t);
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agents', headers: bearer(token), payload: { name: 'edge' } });
  agentId = (res.json() as { id: string }).id;
});
afterAll(() => t.close());

const get = (url: string) => t.app.inject({ method: 'GET', url, headers: bearer(token) });

describe('query timestamps at the edges of the calendar', () => {
  it.each([
    ['metrics', () => `/api/v1/agents/${agentId}/metrics?from=0000-01-01T00:00:00Z`],
    ['metrics summary', () => `/api/v1/agents/${agentId}/metrics/summary?metric=cpu_usage&to=0000-06-01T00:00:00Z`],
    ['metrics rates', () => `/api/v1/agents/${agentId}/metrics/rates?from=0000-01-01T00:00:00Z`],
    ['audit', () => '/api/v1/audit?from=0000-01-01T00:00:00Z'],
  ])('%s: year 0000 is a 400 naming the parameter', async (_name, url) => {
    const res = await get(url());
    expectError(res, 400, 'VALIDATION_ERROR');
    expect((res.json() as { details: Array<{ path: string }> }).details[0]!.path).toMatch(/^(from|to)$/);
  });

  it.each([
    ['raw, `to` in year 1 (its default `from` would be year 0)', () => `/api/v1/agents/${agentId}/metrics?to=0001-01-01T00:00:00Z`],
    ['summary, `to` in year 1', () => `/api/v1/agents/${agentId}/metrics/summary?metric=cpu_usage&to=0001-01-01T00:00:00Z`],
    ['rates, a range in year 1', () => `/api/v1/agents/${agentId}/metrics/rates?from=0001-01-01T00:00:00Z&to=0001-01-02T00:00:00Z`],
    ['raw, the last second of year 9999', () => `/api/v1/agents/${agentId}/metrics?from=9999-12-31T23:59:59Z&to=9999-12-31T23:59:59Z`],
    ['latest', () => `/api/v1/agents/${agentId}/metrics/latest`],
  ])('%s: an empty list, not an error', async (_name, url) => {
    const res = await get(url());
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([]);
  });
});
