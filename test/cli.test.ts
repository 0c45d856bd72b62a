// The admin CLI as an operator uses it, as a real process: migrations, users and keys, including
// against the database of a server that is running (contract: reset the admin password of a running
// installation).
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../migrations/index.js';
import { childEnv, createProcessDataPlace, loginStatus, nodeArgs, PROCESS_TEST_TIMEOUT_MS, ROOT, spawnServer, type ProcessDataPlace } from './helpers/spawn-server.js';

let place: ProcessDataPlace;
beforeAll(async () => {
  // A new database: the first test is `rmm migrate` on it.
  place = await createProcessDataPlace({ database: 'new' });
});
afterAll(() => place.cleanup());

function runCli(
  args: string[],
  stdin = '',
  env = place.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: ROOT, env: childEnv(env) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const cli = (args: string[], stdin = '') => runCli(args, stdin);

describe('rmm cli', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('migrates a new database once and reports nothing to do the second time', async () => {
    const first = await cli(['migrate']);
    expect(first.stdout).toContain(`${migrations.length} migration(s) applied: ${migrations.map(([n]) => n).join(', ')}`);
    const second = await cli(['migrate']);
    expect(second.stdout).toContain('0 migration(s) applied');
  });

  it('rejects an unknown command with usage and exit code 2', async () => {
    const result = await cli(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('unknown command: frobnicate');
  });

  it('creates a user with a password from stdin, or prints a generated one', async () => {
    const given = await cli(['user', 'create', 'tech1', '--password-stdin'], 'tech1-password\n');
    expect(given).toMatchObject({ code: 0 });
    expect(given.stdout).toMatch(/^created user tech1 \(id \d+\)$/m);
    expect(given.stdout).not.toContain('tech1-password');
    const generated = await cli(['user', 'create', 'tech2']);
    expect(generated.stdout).toMatch(/^generated password: \S{12,}$/m);
    expect((await cli(['user', 'create', 'tech1', '--password-stdin'], 'another-pass\n')).code).toBe(1);
    expect((await cli(['user', 'create', 'tech3', '--password-stdin'], 'short\n')).code).toBe(2);
  });

  it('resets the admin password and creates a key while the server is running', async () => {
    // A new installation of its own, so that its first start creates `admin`.
    const installation = await createProcessDataPlace();
    const server = spawnServer({ ...installation.env, ADMIN_PASSWORD: 'first-password' });
    const cli = (args: string[], stdin = '') => runCli(args, stdin, installation.env);
    try {
      await server.listening;
      expect(await loginStatus(server.port, 'admin', 'first-password')).toBe(200);

      const reset = await cli(['user', 'reset-password', 'admin', '--password-stdin'], 'second-password\n');
      expect(reset.stdout).toContain('password of admin changed');
      expect(reset.code).toBe(0);
      expect(await loginStatus(server.port, 'admin', 'second-password')).toBe(200);
      expect(await loginStatus(server.port, 'admin', 'first-password')).toBe(401);

      const created = await cli(['apikey', 'create', 'monitoring', '--permissions', 'read']);
      expect(created.code).toBe(0);
      const key = created.stdout.trim().split('\n').at(-1)!;
      expect(key).toMatch(/^rmm_[0-9A-Za-z]{40}$/);
      const customers = await fetch(`http://127.0.0.1:${server.port}/api/v1/customers`, { headers: { 'x-api-key': key } });
      expect(customers.status).toBe(200);

      // Recovery: a user made read-only becomes an admin with every customer again.
      expect((await cli(['user', 'create', 'tech', '--password-stdin'], 'tech-password\n')).code).toBe(0);
      const api = async (path: string, token: string, init: RequestInit = {}) =>
        fetch(`http://127.0.0.1:${server.port}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
      const signIn = async (username: string, password: string) =>
        ((await (await fetch(`http://127.0.0.1:${server.port}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) })).json()) as { token: string; user: { id: number } });
      const admin = await signIn('admin', 'second-password');
      const tech = await signIn('tech', 'tech-password');
      expect((await api(`/users/${tech.user.id}`, admin.token, { method: 'PATCH', body: JSON.stringify({ role: 'read', customer_ids: [] }) })).status).toBe(200);
      const promoted = await cli(['user', 'make-admin', 'tech']);
      expect(promoted.code, promoted.stdout).toBe(0);
      expect(await (await api('/auth/me', (await signIn('tech', 'tech-password')).token)).json()).toMatchObject({ role: 'admin', customer_ids: null });

      const missing = await cli(['user', 'reset-password', 'nobody']);
      expect(missing.code).toBe(1);
      expect(missing.stdout).toContain('User nobody not found');
      expect(missing.stdout).not.toContain('generated password');
    } finally {
      server.kill('SIGTERM');
      await server.exited;
      await installation.cleanup();
    }
  });
});
