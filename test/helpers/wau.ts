// Agents with software inventories for the software-update tests: registered and heartbeating over the
// real agent API with an agent key, as the reference agent does.
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { apiKey } from './identity.js';

export type Software = Array<Record<string, unknown>>;

/** A program as the agent reports it (contract §2 `software[]`). */
export const program = (name: string, version: string, publisher: string, extra: Record<string, unknown> = {}) => ({
  name,
  version,
  publisher,
  install_date: '2026-01-10',
  ...extra,
});

export async function registerAgent(app: FastifyInstance, key: string, hostname: string, platform: 'windows' | 'linux' = 'windows'): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/agent/register', headers: apiKey(key), payload: { hostname, platform } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { agent_id: string }).agent_id;
}

/** POST /agent/heartbeat with some system data and, unless undefined, `software`; expects 200. */
export async function heartbeat(app: FastifyInstance, key: string, agentId: string, platform: 'windows' | 'linux', software?: unknown) {
  const body = { agent_id: agentId, platform, cpu: { usage_percent: 12.5 }, ...(software === undefined ? {} : { software }) };
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/agent/heartbeat',
    headers: { ...apiKey(key), 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res;
}
