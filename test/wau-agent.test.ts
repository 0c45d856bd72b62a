// The reference agent playing a Windows machine on this (non-Windows) system sends a sample software
// inventory with its heartbeat, so the feature can be tried end to end: it arrives in the customer's
// aggregated inventory. (On Windows the agent reads the registry instead; its parser has unit tests.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_SOFTWARE } from '../src/agent/software-inventory.js';
import { adminToken, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

let live: LiveServer;
let token: string;

beforeAll(async () => {
  live = await startLiveServer();
  token = await adminToken(live);
});
afterAll(() => live.close());

describe('the reference agent with --platform windows', () => {
  it("reports the sample inventory, which the customer's inventory then shows", async () => {
    const customer = await createCustomer(live.app, token, 'AGENT-WAU');
    const key = (await createKey(live.app, bearer(token), 'agent', customer.id)).key;
    const windows = await live.startAgent(key, { platform: 'windows', hostname: 'ws-sample' });
    const linux = await live.startAgent(key, { platform: 'linux', hostname: 'pve-sample' });
    const system = await live.app.inject({ method: 'GET', url: `/api/v1/agents/${windows.id}/system`, headers: bearer(token) });
    expect((system.json() as { software: unknown }).software).toEqual(SAMPLE_SOFTWARE);
    const linuxSystem = await live.app.inject({ method: 'GET', url: `/api/v1/agents/${linux.id}/system`, headers: bearer(token) });
    expect(linuxSystem.json()).not.toHaveProperty('software');

    const res = await live.app.inject({ method: 'GET', url: `/api/v1/customers/${customer.id}/wau/inventory`, headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual(
      SAMPLE_SOFTWARE.map((s) => ({ name: s.name, publisher: s.publisher, agent_count: 1, versions: [{ version: s.version, agent_count: 1 }] })),
    );
  });
});
