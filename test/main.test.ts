// The server as an operator runs it: a real process, its configuration errors, its data directory or
// PostgreSQL database, and its shutdown on SIGTERM.
import { execFileSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import https from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../migrations/index.js';
import { testDbKind } from './helpers/db.js';
import { createProcessDataPlace, loginStatus, messages, PROCESS_TEST_TIMEOUT_MS, spawnServer, type ProcessDataPlace } from './helpers/spawn-server.js';

let place: ProcessDataPlace;
let dataDir: string;
beforeAll(async () => {
  // A new database: the lifecycle test checks what the first start does to it.
  place = await createProcessDataPlace({ database: 'new' });
  dataDir = place.dataDir;
});
afterAll(() => place.cleanup());

/** Runs on the database of this test pass: PGlite in DATA_DIR, or the fresh PostgreSQL database. */
const serverEnv = () => place.env;

describe('configuration errors', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('exits non-zero with one line naming PORT when PORT=abc', async () => {
    const server = spawnServer({ PORT: 'abc', DATA_DIR: dataDir });
    expect(await server.exited).not.toBe(0);
    expect(server.stderr).toEqual([expect.stringMatching(/^Invalid configuration: PORT .*"abc"/)]);
    expect(server.stdout).toEqual([]);
  });

  it('refuses cluster mode on the embedded database with one line, before opening anything', async () => {
    const server = spawnServer({ DATA_DIR: dataDir, NATS_URL: 'nats://rmm:natspass@127.0.0.1:4222' });
    expect(await server.exited).not.toBe(0);
    expect(server.stderr).toEqual([expect.stringMatching(/^Invalid configuration: NATS_URL needs DATABASE_URL \(PostgreSQL\)/)]);
    expect(server.stderr.join('')).not.toContain('natspass');
    expect(server.stdout).toEqual([]);
  });

  it('fails start-up clearly when PostgreSQL cannot be reached, without printing the password', async () => {
    const server = spawnServer({ DATA_DIR: dataDir, DATABASE_URL: 'postgres://rmm:hunter2@127.0.0.1:1/rmm' });
    expect(await server.exited).toBe(1);
    const output = [...server.stdout, ...server.stderr].join('\n');
    expect(messages(server).some((m) => m.startsWith('start-up failed:'))).toBe(true);
    expect(output).not.toContain('hunter2');
  });
});

describe('lifecycle', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('serves, stops on SIGTERM, and keeps its data for the next start', async () => {
    const first = spawnServer(serverEnv());
    await first.listening;
    const ready = await fetch(`http://127.0.0.1:${first.port}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', database: testDbKind() });
    expect(messages(first)).toContain(`migrations: ${migrations.length} applied; TimescaleDB not available`);

    // First start without ADMIN_PASSWORD: admin gets a generated password, logged this once.
    const announced = messages(first).map((m) => /generated password (\S+) /.exec(m)?.[1]).find(Boolean);
    expect(announced).toMatch(/^\S{16,}$/);
    expect(await loginStatus(first.port, 'admin', announced!)).toBe(200);

    if (testDbKind() === 'pglite') {
      expect(await readdir(path.join(dataDir, 'pglite'))).toContain('PG_VERSION');
      // A second server on the same embedded data directory must refuse instead of corrupting it.
      const intruder = spawnServer(serverEnv());
      expect(await intruder.exited).toBe(1);
      expect(intruder.stdout.join('\n')).toContain('is in use by process');
    }

    first.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(messages(first)).toEqual(expect.arrayContaining(['shutting down', 'stopped']));

    const second = spawnServer(serverEnv());
    await second.listening;
    expect(messages(second)).toContain('migrations: 0 applied; TimescaleDB not available');
    expect(second.stdout.join('\n')).not.toContain(announced!);
    expect(await loginStatus(second.port, 'admin', announced!)).toBe(200);
    expect((await fetch(`http://127.0.0.1:${second.port}/readyz`)).status).toBe(200);
    second.kill('SIGINT');
    expect(await second.exited).toBe(0);
  });
});

describe('TLS', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('serves HTTPS with the configured certificate and key', async () => {
    const certFile = path.join(dataDir, 'cert.pem');
    const keyFile = path.join(dataDir, 'key.pem');
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile,
    ], { stdio: 'ignore' });
    const tlsPlace = await createProcessDataPlace();
    const server = spawnServer({ ...tlsPlace.env, TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile });
    try {
      await server.listening;
      const ca = await readFile(certFile);
      const status = await new Promise<number | undefined>((resolve, reject) => {
        https.get({ host: '127.0.0.1', port: server.port, path: '/healthz', ca }, (res) => {
          res.resume();
          resolve(res.statusCode);
        }).on('error', reject);
      });
      expect(status).toBe(200);
    } finally {
      server.kill('SIGTERM');
      await server.exited;
      await tlsPlace.cleanup();
    }
  });
});
