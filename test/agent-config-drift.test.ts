// A simulated firewall's configuration changes now and then (issue 33: the demo's backups never changed,
// so a technician had nothing to compare). The rendering alone, and a live agent whose configuration
// changes on every heartbeat: two backups taken apart differ, and the diff names the change.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { driftConfig, renderConfig } from '../src/agent/config-drift.js';
import { defaultDeviceState } from '../src/agent/device-state.js';
import { DEFAULT_BACKUP_FILE } from '../src/agent/reference-agent.js';
import { adminToken, bearer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('the simulated configuration', () => {
  it('is the shipped file until it first changes; then rules come and go and the timezone moves', async () => {
    const base = await readFile(DEFAULT_BACKUP_FILE, 'utf8');
    const device = defaultDeviceState('freebsd', 'fw-drift', new Date());
    expect(renderConfig(base, device.config_changes)).toBe(base);

    for (let i = 0; i < 3; i++) driftConfig(device);
    const changed = renderConfig(base, device.config_changes);
    expect(count(changed, '<rule uuid=')).toBe(count(base, '<rule uuid=') + 2);
    expect(changed).toContain('<descr>Allow monitoring from 192.0.2.11</descr>');
    expect(changed).toContain('<timezone>Europe/Vienna</timezone>');
    expect(changed).not.toContain('<timezone>Europe/Berlin</timezone>');
    // Still one filter section, closed after the added rules.
    expect(count(changed, '<filter>')).toBe(1);
    expect(changed.indexOf('192.0.2.12')).toBeLessThan(changed.indexOf('</filter>'));

    for (let i = 0; i < 20; i++) driftConfig(device);
    expect(count(renderConfig(base, device.config_changes), '<rule uuid=')).toBe(count(base, '<rule uuid=') + 4);
  });
});

describe('backups of a simulated firewall whose configuration changes', () => {
  let server: LiveServer;
  let token: string;
  beforeAll(async () => {
    server = await startLiveServer();
    token = await adminToken(server);
  });
  afterAll(() => server?.close());

  it('differ, and the diff shows the change', async () => {
    const { key } = await createKey(server.app, bearer(token), 'agent');
    const fw = await server.startAgent(key, { name: 'fw-drift', hostname: 'fw-drift', platform: 'freebsd', heartbeatIntervalMs: 200, configChangeChance: 1 });
    const backup = async () => {
      const res = await server.app.inject({ method: 'POST', url: `/api/v1/agents/${fw.id}/backup`, headers: bearer(token) });
      expect(res.statusCode, res.body).toBe(201);
      return res.json<{ id: number }>().id;
    };
    const first = await backup();
    await sleep(1_000);
    const second = await backup();
    const res = await server.app.inject({ method: 'GET', url: `/api/v1/agents/${fw.id}/backups/diff?a=${first}&b=${second}`, headers: bearer(token) });
    expect(res.statusCode, res.body).toBe(200);
    const diff = res.json<{ added: number; diff: string }>();
    expect(diff.added).toBeGreaterThan(0);
    expect(diff.diff).toMatch(/^\+.*(Allow monitoring from|<timezone>)/m);
  });
});
