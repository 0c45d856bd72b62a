// Putting the previous binary back (issue 30): the device must not be left without a working agent, so
// a start that fails is retried with a doubling wait until it succeeds, and every failure is logged and
// reported (`rollback_failed`). The update record (phase rolling-back) stays on disk until the previous
// binary runs, so a restarted updater goes on trying; afterwards the firmware is remembered as failed
// and `rolled_back` is reported, which sets the update request on the server again.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, rename } from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../../platform/clock.js';
import type { Backoff, FirmwareMemory } from './firmware-memory.js';
import type { ServiceControl } from './service-control.js';
import { syncDirectory, type UpdateRecord, type UpdateStateFiles } from './update-state.js';

export interface RollbackDeps {
  binaryPath: string;
  service: ServiceControl;
  files: UpdateStateFiles;
  memory: FirmwareMemory;
  clock: Clock;
  signal: AbortSignal;
  log(line: string): void;
  /** Between failed starts: the first wait, doubling up to the longest. */
  retry: Backoff;
}

/** Restores and starts the previous binary; returns once it runs. Throws only when aborted. */
export async function rollBack(deps: RollbackDeps, record: UpdateRecord, reason: string): Promise<void> {
  const { binaryPath, service, files, memory, log } = deps;
  if (record.phase !== 'rolling-back') {
    record = { ...record, phase: 'rolling-back', reason };
    await files.writeRecord(record);
  }
  log(`firmware ${record.version} failed: ${reason}; restoring the previous binary`);
  await service.stop().catch(() => undefined); // it may well not be running: that is why we are here
  const current = await sha256OfFile(binaryPath).catch(() => null);
  let problem: string | null = null;
  if (current !== record.previous_sha256) {
    if (await exists(record.previous)) {
      await rename(record.previous, binaryPath);
      await syncDirectory(path.dirname(binaryPath));
    } else {
      problem = `the kept previous binary ${record.previous} is missing; starting what is installed`;
      log(`ROLLBACK FAILED for firmware ${record.version}: ${problem}`);
      await memory.report({ state: 'rollback_failed', version: record.version, sha256: record.sha256, message: problem });
    }
  }
  await startWithRetries(deps, record);
  await files.removeRecord();
  const refusal = await memory.remember({ sha256: record.sha256, signature: record.signature, version: record.version, reason });
  await memory.report({ state: problem ? 'rollback_failed' : 'rolled_back', version: record.version, sha256: record.sha256, message: problem ?? reason });
  log(
    `${problem ? 'the installed binary was started again' : 'previous binary restored and started'}; ` +
      `firmware ${record.version} is not tried again before ${refusal.retry_at}; update request kept`,
  );
}

async function startWithRetries(deps: RollbackDeps, record: UpdateRecord): Promise<void> {
  const { service, memory, clock, signal, log } = deps;
  let waitMs = deps.retry.initialMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await service.start();
      if (!(await service.isRunning())) throw new Error(`${service.description} is not running after the start`);
      if (attempt > 1) log(`the agent runs again (start attempt ${attempt})`);
      return;
    } catch (err) {
      if (signal.aborted) throw err;
      const message = `start attempt ${attempt} failed: ${(err as Error).message}`;
      log(`ROLLBACK FAILED for firmware ${record.version}: ${message}; the agent is down; trying again in ${waitMs / 1000} s`);
      await memory.report({ state: 'rollback_failed', version: record.version, sha256: record.sha256, message: `${message}; retrying` });
    }
    await clock.sleep(waitMs, signal);
    waitMs = Math.min(waitMs * 2, deps.retry.maxMs);
  }
}

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
