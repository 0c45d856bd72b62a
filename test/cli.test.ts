// The admin CLI as an operator uses it, as a real process.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../migrations/index.js';
import { createEmptyPostgresUrl } from './helpers/db.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');

let dataDir: string;
let postgres: { url: string; drop(): Promise<void> } | undefined;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-cli-'));
  postgres = await createEmptyPostgresUrl();
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
  await postgres?.drop();
});

function cli(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
  delete env.TEST_DATABASE_URL;
  if (postgres) env.DATABASE_URL = postgres.url;
  else delete env.DATABASE_URL;
  return run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env });
}

describe('rmm cli', () => {
  it('migrates a new database once and reports nothing to do the second time', async () => {
    const first = await cli('migrate');
    expect(first.stdout).toContain(`${migrations.length} migration(s) applied: ${migrations.map(([n]) => n).join(', ')}`);
    const second = await cli('migrate');
    expect(second.stdout).toContain('0 migration(s) applied');
  });

  it('rejects an unknown command with usage and exit code 2', async () => {
    await expect(cli('frobnicate')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command: frobnicate') });
  });
});
