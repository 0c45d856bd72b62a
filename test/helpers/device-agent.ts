// A reference agent whose device capabilities (issue 59) the server has stored: its hello arrives on the
// socket after the connection, so a page opened at once could still see an agent that offers nothing.
import { expect, vi } from 'vitest';
import type { ReferenceAgentOptions } from '../../src/agent/reference-agent.js';
import { bearer } from './identity.js';
import type { LiveAgent, LiveServer } from './live-agent.js';

export async function startDeviceAgent(server: LiveServer, token: string, key: string, options: Partial<ReferenceAgentOptions>, capabilities: readonly string[]): Promise<LiveAgent> {
  const agent = await server.startAgent(key, options);
  await vi.waitFor(
    async () => {
      const res = await server.app.inject({ method: 'GET', url: `/api/v1/agents/${agent.id}`, headers: bearer(token) });
      expect(res.json<{ capabilities: string[] }>().capabilities).toEqual(expect.arrayContaining([...capabilities]));
    },
    { timeout: 10_000 },
  );
  return agent;
}
