// Backup and restore of a whole server (issue 34, acceptance 2), on the embedded database and (in the
// PostgreSQL pass) on PostgreSQL: a server with an agent with metrics and a configuration backup, a
// firmware blob, a user with two-factor sign-in and an encrypted setting is stopped and backed up with
// the CLI (secrets sealed with a passphrase); the backup is restored into a new place, where a new server
// serves all of it: the user signs in with a TOTP code, which needs the restored encryption key.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, client, populate, stop } from './helpers/backup-archive.js';
import { createProcessDataPlace, PROCESS_TEST_TIMEOUT_MS, spawnServer, type ProcessDataPlace } from './helpers/spawn-server.js';

const PASSWORD = 'admin-password-1';
const PASSPHRASE = 'correct horse battery staple';

describe('backup and restore', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let source: ProcessDataPlace;
  const targets: ProcessDataPlace[] = [];
  let work: string;
  let totpSecret = '';
  let agentId = '';
  /** The agent's stored heartbeat as served before the backup (kept in parts since issue 62: both tables must travel). */
  let systemText = '';
  const firmware = randomBytes(64 * 1024);

  beforeAll(async () => {
    source = await createProcessDataPlace();
    work = await mkdtemp(path.join(os.tmpdir(), 'rmm-backup-test-'));
  });
  afterAll(async () => {
    await source?.cleanup();
    for (const target of targets) await target.cleanup();
    await rm(work, { recursive: true, force: true });
  });

  it('backs up a stopped server with the CLI, secrets sealed with a passphrase', async () => {
    const server = spawnServer({ ...source.env, ADMIN_PASSWORD: PASSWORD });
    await server.listening;
    const { api, token, agentId: id } = await populate(server, { password: PASSWORD, work, hostname: 'fw-backup', firmware });
    agentId = id;
    systemText = (await api('GET', `/agents/${agentId}/system`, undefined, token)).text;
    expect(systemText.length).toBeGreaterThan(100);
    expect((await api('PUT', '/settings', { webhook_secret: 'whsec-kept-encrypted-0123456789' }, token)).status).toBe(200);
    expect((await api('POST', '/users', { username: 'tina', password: 'tina-password-22' }, token)).status).toBe(201);
    const tina = ((await api('POST', '/auth/login', { username: 'tina', password: 'tina-password-22' })).json() as unknown as { token: string }).token;
    totpSecret = ((await api('POST', '/auth/2fa/setup', {}, tina)).json() as unknown as { secret: string }).secret;
    expect((await api('POST', '/auth/2fa/confirm', { code: await generate({ secret: totpSecret }) }, tina)).status).toBe(200);

    // While the server holds the embedded database, the CLI refuses to copy it half-written.
    if (!source.env.DATABASE_URL) expect((await cli(['backup', '--out', path.join(work, 'early.zip')], source.env)).code).toBe(1);
    await stop(server);

    const made = await cli(['backup', '--out', path.join(work, 'backup.zip'), '--passphrase-stdin'], source.env, `${PASSPHRASE}\n`);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/backup written to .*backup\.zip: (pglite|postgres) database, 1 stored file\(s\), secrets sealed/);
    // PostgreSQL without pg_dump: the CLI's own dump (forced here, as pg_dump is installed).
    if (source.env.DATABASE_URL) {
      const logical = await cli(['backup', '--out', path.join(work, 'logical.zip'), '--passphrase-stdin', '--logical'], source.env, `${PASSPHRASE}\n`);
      expect(logical.code, logical.stderr).toBe(0);
    }
  });

  it.each(['backup.zip', 'logical.zip'])('restores %s onto an empty place only, and a new server there serves everything', async (name) => {
    if (name === 'logical.zip' && !source.env.DATABASE_URL) return; // the embedded database has one format
    const target = await createProcessDataPlace({ database: 'new' });
    targets.push(target);
    const file = path.join(work, name);
    expect((await cli(['restore', file], target.env)).stderr).toMatch(/sealed: give the passphrase/);
    expect((await cli(['restore', file, '--passphrase-stdin'], target.env, 'not the right passphrase\n')).stderr).toMatch(/passphrase does not open/);
    const restored = await cli(['restore', file, '--passphrase-stdin'], target.env, `${PASSPHRASE}\n`);
    expect(restored.code, restored.stderr).toBe(0);
    // Twice is refused: the place holds data now.
    const again = await cli(['restore', file, '--passphrase-stdin'], target.env, `${PASSPHRASE}\n`);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds/);

    const server = spawnServer(target.env);
    await server.listening;
    try {
      const api = client(server);
      const { token } = (await api('POST', '/auth/login', { username: 'admin', password: PASSWORD })).json() as unknown as { token: string };
      const agents = (await api('GET', '/agents', undefined, token)).json();
      expect(agents.map((a) => a.hostname)).toEqual(['fw-backup']);
      expect((await api('GET', `/agents/${agentId}/system`, undefined, token)).text).toBe(systemText);
      expect(Object.keys((await api('GET', `/agents/${agentId}/metrics/latest`, undefined, token)).json()).length).toBeGreaterThan(0);
      expect((await api('GET', `/agents/${agentId}/backups`, undefined, token)).json()).toHaveLength(1);
      const download = await fetch(`http://127.0.0.1:${server.port}/api/v1/firmware/download?platform=freebsd`, { headers: { authorization: `Bearer ${token}` } });
      expect(createHash('sha256').update(Buffer.from(await download.arrayBuffer())).digest('hex')).toBe(createHash('sha256').update(firmware).digest('hex'));
      expect(((await api('GET', '/settings', undefined, token)).json() as unknown as { webhook_secret: unknown }).webhook_secret).toBeTruthy();
      // New rows get new ids after the restored ones (identity sequences moved on).
      expect((await api('POST', '/apikeys', { name: 'after restore', permissions: 'read' }, token)).status).toBe(201);
      // Two-factor sign-in works: the TOTP secret was stored encrypted, with the restored key. The code
      // of the next 30 s step (the server accepts one step of drift): the current one was used before
      // the backup, and the restored server remembers that too.
      const pending = (await api('POST', '/auth/login', { username: 'tina', password: 'tina-password-22' })).json() as unknown as { pending_token: string };
      const code = await generate({ secret: totpSecret, epoch: Math.floor(Date.now() / 1000) + 30 });
      const signedIn = await api('POST', '/auth/2fa/validate', { pending_token: pending.pending_token, code });
      expect(signedIn.status, signedIn.text).toBe(200);
    } finally {
      await stop(server);
    }
  });
});
