// Runs install commands as a technician pastes them: through sh, into a temporary folder, without a
// service manager (RMM_NO_SERVICE=1: the agent starts in the background). `stopAll` ends the agents
// they started and removes the folders.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { referenceAgentLauncher } from '../../src/demo/agent-launcher.js';

const run = promisify(execFile);

export class InstallRuns {
  readonly #dirs: string[] = [];

  /** Runs `command` with sh; resolves with the install folder and what it printed (rejects on a non-zero exit). */
  async run(command: string): Promise<{ dir: string; stdout: string }> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rmm-install-'));
    this.#dirs.push(dir);
    const { stdout } = await run('sh', ['-c', command], { env: { ...process.env, RMM_INSTALL_DIR: dir, RMM_NO_SERVICE: '1' }, timeout: 30_000 });
    return { dir, stdout };
  }

  async stopAll(): Promise<void> {
    for (const dir of this.#dirs) {
      const pid = Number(await readFile(path.join(dir, 'rmm-agent.pid'), 'utf8').catch(() => '0'));
      try {
        if (pid > 0) process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await sleep(300);
    for (const dir of this.#dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  }
}

/** Uploads the reference agent's launcher as the Linux firmware (the binary install scripts download). */
export async function uploadLauncherFirmware(serverUrl: string, headers: Record<string, string>): Promise<void> {
  const res = await fetch(`${serverUrl}/api/v1/firmware/upload?version=1.0.0&platform=linux`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/octet-stream' },
    body: referenceAgentLauncher(),
  });
  if (res.status !== 201) throw new Error(`firmware upload: HTTP ${res.status} ${await res.text()}`);
}
