// Services on an agent's device (issue 59) end to end, on this machine's real service manager: without
// systemd as PID 1 that is Debian's init scripts, and the test starts and stops the real nginx through
// `service nginx start|stop` (via the API, the reference agent and its WebSocket) and sees the state
// change in the list. Needs root and Debian's nginx package (CI has both); nginx is stopped and enabled
// again at the end whatever happened.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceService } from '../src/modules/agent-hub/device-protocol.js';
import { expectError } from './helpers/assertions.js';
import { adminToken, bearer, createKey, login, seedUser } from './helpers/identity.js';
import { startLiveServer, type LiveAgent, type LiveServer } from './helpers/live-agent.js';

const skipReason = !existsSync('/etc/init.d/nginx')
  ? "Debian's nginx package is not installed (no /etc/init.d/nginx)"
  : process.getuid?.() !== 0
    ? 'not running as root, so services cannot be started or stopped'
    : null;
const systemd = (() => {
  try {
    return readFileSync('/proc/1/comm', 'utf8').trim() === 'systemd';
  } catch {
    return false;
  }
})();

/** Stops nginx and puts its start links back, whatever a failed test left. */
function restoreNginx(): void {
  for (const args of [['update-rc.d', 'nginx', 'enable'], ['service', 'nginx', 'stop']]) {
    try {
      execFileSync(args[0]!, args.slice(1), { stdio: 'ignore', timeout: 60_000 });
    } catch {
      // already so
    }
  }
}

let s: LiveServer;
let admin: Record<string, string>;
let agent: LiveAgent;

describe.skipIf(skipReason !== null)(`services through the device's service manager${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  beforeAll(async () => {
    restoreNginx();
    s = await startLiveServer();
    admin = bearer(await adminToken(s));
    agent = await s.startAgent((await createKey(s.app, admin, 'agent')).key, { name: 'web-1' });
  }, 60_000);
  afterAll(async () => {
    restoreNginx();
    await s?.close();
  });

  const call = (method: 'GET' | 'POST', url: string, headers = admin) => s.app.inject({ method, url: `/api/v1${url}`, headers });

  async function nginx(headers = admin): Promise<DeviceService | undefined> {
    const res = await call('GET', `/agents/${agent.id}/services`, headers);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { manager: string; services: DeviceService[] };
    expect(body.manager).toBe(systemd ? 'systemd' : 'sysv');
    return body.services.find((svc) => svc.name === 'nginx');
  }

  async function act(action: string): Promise<{ service: DeviceService; output: string }> {
    const res = await call('POST', `/agents/${agent.id}/services/nginx/${action}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { service: DeviceService; output: string };
  }

  const nginxRuns = () => {
    try {
      execFileSync('service', ['nginx', 'status'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };

  it('lists nginx stopped, starts it for real, lists it running, stops it, lists it stopped', async () => {
    expect(await nginx()).toMatchObject({ name: 'nginx', state: 'stopped', start_mode: 'auto', description: expect.stringMatching(/nginx/) });

    const started = await act('start');
    expect(started.service).toMatchObject({ name: 'nginx', state: 'running' });
    expect(nginxRuns()).toBe(true);
    expect((await nginx())?.state).toBe('running');

    const stopped = await act('stop');
    expect(stopped.service).toMatchObject({ name: 'nginx', state: 'stopped' });
    expect(nginxRuns()).toBe(false);
    expect((await nginx())?.state).toBe('stopped');

    const audit = (await call('GET', '/audit?action=device.service_action')).json() as Array<{ target: string | null; status_code: number }>;
    expect(audit.map((e) => e.target)).toEqual(expect.arrayContaining(['agent web-1: start service nginx', 'agent web-1: stop service nginx']));
  }, 120_000);

  it.skipIf(systemd)('disables and enables the start at boot (the rc links)', async () => {
    expect((await act('disable')).service.start_mode).toBe('disabled');
    expect((await nginx())?.start_mode).toBe('disabled');
    expect((await act('enable')).service.start_mode).toBe('auto');
  }, 60_000);

  it('refuses hostile names and actions with 400 and runs nothing; an unknown service is 404', async () => {
    for (const path of ['nginx%3Bid/start', 'nginx%20status/start', '..%2F..%2Fbin%2Fsh/start', '%2Fetc%2Finit.d%2Fnginx/start', '-nginx/start', 'nginx/reload', 'nginx/status']) {
      expectError(await call('POST', `/agents/${agent.id}/services/${path}`), 400, 'VALIDATION_ERROR');
    }
    expectError(await call('POST', `/agents/${agent.id}/services/no-such-service-here/start`), 404, 'NOT_FOUND');
    expect(nginxRuns()).toBe(false);
  });

  it('lets a read user list but not act', async () => {
    await seedUser(s, 'svc-reader', 'user-password-1', { role: 'read' });
    const reader = bearer(await login(s.app, 'svc-reader', 'user-password-1'));
    expect((await nginx(reader))?.state).toBe('stopped');
    expectError(await call('POST', `/agents/${agent.id}/services/nginx/start`, reader), 403, 'FORBIDDEN');
    expect(nginxRuns()).toBe(false);
  });
});
