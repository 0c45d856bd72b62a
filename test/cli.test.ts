// The admin CLI as an operator uses it, as a real process.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../migrations/index.js';
import { childEnv, createProcessDataPlace, ROOT, type ProcessDataPlace } from './helpers/spawn-server.js';

const run = promisify(execFile);

let place: ProcessDataPlace;
beforeAll(async () => {
  place = await createProcessDataPlace();
});
afterAll(() => place.cleanup());

function cli(...args: string[]) {
  return run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env: childEnv(place.env) });
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
