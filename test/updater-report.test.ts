// POST /agents/{id}/updater-report (issue 30): the on-device updater's report is kept on the agent and
// shown as its `updater` (GET /agents, /agents/{id}, a customer's agents); the states that leave the
// old version running set the update request again, even after the new binary's own heartbeat cleared
// it; the agent key's scope applies as for the heartbeat; the body is checked; it is not audited.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './helpers/assertions.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { adminToken, apiKey, bearer, createCustomer, createKey } from './helpers/identity.js';

let t: TestApp;
let admin: Record<string, string>;
let agentKey: string;
let customerKey: string;
let customerId: number;

beforeAll(async () => {
  t = await buildTestApp();
  const token = await adminToken(t);
  admin = bearer(token);
  agentKey = (await createKey(t.app, admin, 'agent')).key;
  customerId = (await createCustomer(t.app, token, 'C-77')).id;
  customerKey = (await createKey(t.app, admin, 'agent', customerId)).key;
});
afterAll(() => t?.close());

async function register(key: string, hostname: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname, platform: 'linux' } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { agent_id: string }).agent_id;
}

const report = (id: string, body: unknown, key = agentKey) =>
  t.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/updater-report`, headers: apiKey(key), payload: body as Record<string, unknown> });

async function agent(id: string) {
  const res = await t.app.inject({ method: 'GET', url: `/api/v1/agents/${id}`, headers: admin });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { update_requested: boolean; updater: { state: string; version: string | null; message: string | null; reported_at: string } | null };
}

describe('POST /agents/{id}/updater-report', () => {
  it('keeps the latest report as the agent\'s `updater`, in every agent object', async () => {
    const id = await register(customerKey, 'report-host');
    expect((await agent(id)).updater).toBeNull();

    const res = await report(id, { state: 'installing', version: '2.1.0', sha256: 'a'.repeat(64) }, customerKey);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    const first = (await agent(id)).updater!;
    expect(first).toEqual({ state: 'installing', version: '2.1.0', message: null, reported_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/) });

    expect((await report(id, { state: 'healthy', version: '2.1.0', message: 'passed its 300 s window' }, customerKey)).statusCode).toBe(200);
    const latest = { state: 'healthy', version: '2.1.0', message: 'passed its 300 s window', reported_at: expect.any(String) };
    expect((await agent(id)).updater).toEqual(latest);
    const list = await t.app.inject({ method: 'GET', url: `/api/v1/agents?q=report-host`, headers: admin });
    expect((list.json() as Array<{ id: string; updater: unknown }>).find((a) => a.id === id)?.updater).toEqual(latest);
    const ofCustomer = await t.app.inject({ method: 'GET', url: `/api/v1/customers/${customerId}/agents`, headers: admin });
    expect((ofCustomer.json() as Array<{ id: string; updater: unknown }>).find((a) => a.id === id)?.updater).toEqual(latest);
  });

  it('sets the update request again on rolled_back, rollback_failed and refused, even after the new binary\'s heartbeat cleared it', async () => {
    const firmware = Buffer.from(`agent ${randomBytes(4).toString('hex')}`);
    const sha = createHash('sha256').update(firmware).digest('hex');
    const up = await t.app.inject({
      method: 'POST',
      url: '/api/v1/firmware/upload?version=9.9.9&platform=linux',
      headers: { ...admin, 'content-type': 'application/octet-stream' },
      payload: firmware,
    });
    expect(up.statusCode, up.body).toBe(201);

    for (const state of ['rolled_back', 'rollback_failed', 'refused']) {
      const id = await register(agentKey, `pending-${state}`);
      expect((await t.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/request-update`, headers: admin })).statusCode).toBe(200);
      // The new binary's one heartbeat reports the latest firmware: the server clears the flag.
      const beat = await t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(agentKey), payload: { agent_id: id, platform: 'linux', agent_sha256: sha } });
      expect(beat.statusCode, beat.body).toBe(200);
      expect((await agent(id)).update_requested).toBe(false);

      expect((await report(id, { state, version: '9.9.9', message: 'no heartbeat from the new binary for 160 s' })).statusCode).toBe(200);
      expect(await agent(id)).toMatchObject({ update_requested: true, updater: { state, version: '9.9.9' } });
    }

    const quiet = await register(agentKey, 'pending-quiet');
    for (const state of ['installing', 'healthy']) {
      expect((await report(quiet, { state })).statusCode).toBe(200);
      expect((await agent(quiet)).update_requested).toBe(false);
    }
  });

  it('keeps the update request while the updater checks the new binary (installing), however its heartbeats look', async () => {
    const firmware = Buffer.from(`agent ${randomBytes(4).toString('hex')}`);
    const sha = createHash('sha256').update(firmware).digest('hex');
    const up = await t.app.inject({
      method: 'POST',
      url: '/api/v1/firmware/upload?version=9.9.10&platform=linux',
      headers: { ...admin, 'content-type': 'application/octet-stream' },
      payload: firmware,
    });
    expect(up.statusCode, up.body).toBe(201);
    const id = await register(agentKey, 'checking-host');
    expect((await t.app.inject({ method: 'POST', url: `/api/v1/agents/${id}/request-update`, headers: admin })).statusCode).toBe(200);
    const beat = () => t.app.inject({ method: 'POST', url: '/api/v1/agent/heartbeat', headers: apiKey(agentKey), payload: { agent_id: id, platform: 'linux', agent_sha256: sha } });

    expect((await report(id, { state: 'installing', version: '9.9.10', sha256: sha })).statusCode).toBe(200);
    expect((await beat()).statusCode).toBe(200);
    expect((await agent(id)).update_requested).toBe(true); // one heartbeat of the new binary is not health

    // Passed: the updater reports healthy (and clears the flag itself); a heartbeat alone may clear it now too.
    expect((await report(id, { state: 'healthy', version: '9.9.10', sha256: sha })).statusCode).toBe(200);
    expect((await beat()).statusCode).toBe(200);
    expect((await agent(id)).update_requested).toBe(false);
  });

  it('answers 404 for an unknown agent and for another customer\'s agent; other keys and no key are refused', async () => {
    const mine = await register(customerKey, 'scoped-host');
    const global = await register(agentKey, 'global-host');
    expectError(await report('00000000000000000000000000000bad', { state: 'healthy' }), 404, 'NOT_FOUND');
    expectError(await report(global, { state: 'refused' }, customerKey), 404, 'NOT_FOUND');
    expect((await agent(global)).updater).toBeNull();
    expect((await report(mine, { state: 'healthy' }, agentKey)).statusCode).toBe(200); // an unscoped agent key reaches all
    const none = await t.app.inject({ method: 'POST', url: `/api/v1/agents/${mine}/updater-report`, payload: { state: 'healthy' } });
    expectError(none, 401, 'UNAUTHORIZED');
    const readKey = (await createKey(t.app, admin, 'read')).key;
    expectError(await report(mine, { state: 'healthy' }, readKey), 403, 'FORBIDDEN');
  });

  it('checks the body: a known state, a version of the firmware form, a SHA-256, a message of at most 1000 characters', async () => {
    const id = await register(agentKey, 'validated-host');
    for (const body of [
      {},
      { state: 'exploded' },
      { state: 'healthy', version: '../../etc' },
      { state: 'healthy', sha256: 'xyz' },
      { state: 'refused', message: 'x'.repeat(1001) },
      { state: 'healthy', message: 42 },
    ]) {
      expectError(await report(id, body), 400, 'VALIDATION_ERROR');
    }
    expect((await report(id, { state: 'refused', message: 'x'.repeat(1000) })).statusCode).toBe(200);
    expect((await agent(id)).updater?.message).toHaveLength(1000);
  });

  it('is machine traffic: not written to the audit log', async () => {
    const id = await register(agentKey, 'unaudited-host');
    expect((await report(id, { state: 'installing', version: '1.0.0' })).statusCode).toBe(200);
    const audit = await t.app.inject({ method: 'GET', url: '/api/v1/audit?limit=1000', headers: admin });
    expect(audit.statusCode).toBe(200);
    expect((audit.json() as Array<{ path: string }>).filter((e) => e.path.includes('updater-report'))).toEqual([]);
  });
});
