// The on-device updater (contract §9, issue 30). Its rule: the device is never left without a working
// agent. Every poll it asks whether an update was requested for this agent, and replaces the binary only
// when the flag is set, firmware exists for the platform, its SHA-256 differs from the installed file
// and (with a public key) its Ed25519 signature verifies. The new binary is downloaded next to the old
// one and verified; the update record goes to disk before the old binary is touched; the swap keeps
// `<binary>.previous`; the new binary must then pass the health rule (health-check.ts). Only then is the
// update request cleared and `healthy` reported. Otherwise the previous binary is put back and started,
// retried with back-off until it runs. A restarted updater finishes what its record says. Firmware that
// failed here is remembered on disk and not fetched again until its back-off ends or the server offers
// another. Every outcome is reported to the server (POST /agents/{id}/updater-report).
import { randomBytes, type KeyObject } from 'node:crypto';
import { chmod, copyFile, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { verifyFirmware } from '../../modules/firmware/firmware-signature.js';
import { systemClock, type Clock } from '../../platform/clock.js';
import type { Platform } from '../device-state.js';
import { checkHealth, progressOf, timeLeft, type CheckProgress, type HealthRule } from './health-check.js';
import type { ServiceControl } from './service-control.js';
import { FirmwareMemory, type Backoff } from './firmware-memory.js';
import { rollBack, sha256OfFile } from './rollback.js';
import { UpdaterApi, type FirmwareView } from './updater-api.js';
import { syncDirectory, syncFile, UpdateStateFiles, type UpdateRecord } from './update-state.js';

export interface UpdaterOptions {
  serverUrl: string;
  apiKey: string;
  agentId: string;
  /** The installed agent binary that gets replaced. */
  binaryPath: string;
  /** Firmware platform; default: the platform the server knows for the agent. */
  platform?: Platform;
  service: ServiceControl;
  pollIntervalMs?: number;
  /** From the start of the new binary to its first heartbeat at the server (default 3 min). */
  healthTimeoutMs?: number;
  /** How long after that it must keep heartbeating and running (default 5 min). */
  healthWindowMs?: number;
  /** Longest pause between its heartbeats within the window (default 150 s: 2.5 × the agent's 60 s). */
  heartbeatGapMs?: number;
  /** How often the health check looks at the server and the service (default 5 s). */
  healthPollMs?: number;
  /** Starting the previous binary again: first wait and longest wait between tries (default 5 s to 5 min). */
  rollbackRetry?: Backoff;
  /** Firmware that failed here: first wait and longest wait before it is tried again (default 1 h to 24 h). */
  refusalBackoff?: Backoff;
  /** Ed25519 public key: firmware without a signature that verifies with it is refused. */
  publicKey?: KeyObject | null;
  clock?: Clock;
  log?: (line: string) => void;
}

export type CheckResult =
  | 'not-requested' // flag not set: nothing to do
  | 'no-platform' // the server does not know the agent's platform yet and none was configured
  | 'no-firmware' // no firmware for the platform
  | 'already-installed' // installed hash equals the latest: the flag was cleared
  | 'known-bad' // this firmware failed here before and its back-off has not ended: not fetched again
  | 'download-failed' // the download broke off (network, server): tried again next poll
  | 'refused' // hash or signature wrong: nothing was touched, remembered, reported
  | 'updated' // replaced, started, passed the health rule, flag cleared
  | 'rolled-back'; // replaced but unhealthy (or never replaced): the previous binary runs again

export interface CheckOutcome {
  result: CheckResult;
  version?: string;
  reason?: string;
}

export class Updater {
  private readonly clock: Clock;
  private readonly log: (line: string) => void;
  private readonly pollIntervalMs: number;
  private readonly health: HealthRule;
  private readonly rollbackRetry: Backoff;
  private readonly abort = new AbortController();
  private readonly api: UpdaterApi;
  private readonly files: UpdateStateFiles;
  private readonly memory: FirmwareMemory;
  private inFlight: Promise<CheckOutcome> | null = null;
  private loop: Promise<void> | null = null;
  private started = false;

  constructor(private readonly options: UpdaterOptions) {
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? (() => undefined);
    this.pollIntervalMs = options.pollIntervalMs ?? 60_000;
    this.health = {
      timeoutMs: options.healthTimeoutMs ?? 180_000,
      windowMs: options.healthWindowMs ?? 300_000,
      gapMs: options.heartbeatGapMs ?? 150_000,
      pollMs: options.healthPollMs ?? 5_000,
    };
    this.rollbackRetry = options.rollbackRetry ?? { initialMs: 5_000, maxMs: 300_000 };
    this.api = new UpdaterApi(options.serverUrl, options.apiKey, options.agentId, this.abort.signal);
    this.files = new UpdateStateFiles(options.binaryPath);
    this.memory = new FirmwareMemory(this.files, this.api, this.clock, this.log, options.refusalBackoff ?? { initialMs: 3_600_000, maxMs: 86_400_000 });
  }

  /** Polls until stop(); a failed check is logged and the next poll tries again. */
  run(): Promise<void> {
    this.loop ??= (async () => {
      while (!this.abort.signal.aborted) {
        try {
          await this.checkOnce();
        } catch (err) {
          if (!this.abort.signal.aborted) this.log(`update check failed: ${(err as Error).message}`);
        }
        await this.clock.sleep(this.pollIntervalMs, this.abort.signal).catch(() => undefined);
      }
    })();
    return this.loop;
  }

  /**
   * Ends the loop; a check in progress is cut short and awaited. An update under way stays recorded on
   * disk, and the next start of the updater resumes its health check or its rollback.
   */
  async stop(): Promise<void> {
    this.abort.abort(new Error('updater stopped'));
    await Promise.allSettled([this.loop, this.inFlight]);
  }

  /** One poll. A call while another check runs joins that check instead of starting a second one. */
  checkOnce(): Promise<CheckOutcome> {
    this.inFlight ??= this.check().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async check(): Promise<CheckOutcome> {
    if (!this.started) await this.onFirstCheck();
    await this.memory.sendUnsentReport();
    const record = await this.readRecord();
    if (record) return this.resume(record);

    const agent = await this.api.getAgent();
    if (!agent.update_requested) return { result: 'not-requested' };
    const platform = this.options.platform ?? agent.platform;
    if (!platform) return { result: 'no-platform' };
    const latest = await this.api.latestFirmware(platform);
    if (!latest) return { result: 'no-firmware' };
    const wanted = latest.sha256.toLowerCase();
    const installed = await sha256OfFile(this.options.binaryPath);
    if (installed === wanted) {
      // The update already happened (perhaps its clearing request was lost): only the flag is left.
      await this.api.clearFlag();
      this.log(`firmware ${latest.version} is already installed; update request cleared`);
      return { result: 'already-installed', version: latest.version };
    }
    const signature = latest.signature ?? null;
    if (await this.memory.holdsBack(wanted, signature, latest.version)) return { result: 'known-bad', version: latest.version };

    const unsigned = this.signatureProblem(platform, latest, wanted);
    if (unsigned) return this.refuse(latest, wanted, unsigned);
    return this.install(latest, { platform, wanted, installed, baseline: agent.last_heartbeat });
  }

  private async onFirstCheck(): Promise<void> {
    this.started = true;
    if (!this.options.publicKey) this.log('no firmware public key given: firmware signatures are not checked');
    // Downloads a killed updater left behind.
    const dir = path.dirname(this.options.binaryPath);
    const prefix = `.${path.basename(this.options.binaryPath)}.download-`;
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      if (name.startsWith(prefix)) await rm(path.join(dir, name), { force: true });
    }
  }

  /** The update record; one that cannot be read is moved aside (and said so) rather than trusted. */
  private async readRecord(): Promise<UpdateRecord | null> {
    try {
      return await this.files.readRecord();
    } catch (err) {
      const aside = `${this.files.recordPath}.unreadable`;
      await rename(this.files.recordPath, aside).catch(() => undefined);
      this.log(`UPDATE RECORD UNREADABLE (${(err as Error).message}); moved to ${aside}; the installed binary is kept as it is`);
      return null;
    }
  }

  /** Why firmware may not be installed for want of a valid signature, or null when it may. */
  private signatureProblem(platform: Platform, latest: FirmwareView, sha256: string): string | null {
    const key = this.options.publicKey;
    if (!key) return null;
    if (!latest.signature) return 'it has no signature, and this updater accepts only firmware signed with its public key';
    if (!verifyFirmware(key, { platform, version: latest.version, sha256 }, latest.signature)) {
      return `its signature does not verify with this updater's public key for platform ${platform}, version ${latest.version} and SHA-256 ${sha256}`;
    }
    return null;
  }

  private async refuse(latest: FirmwareView, sha256: string, reason: string): Promise<CheckOutcome> {
    const refusal = await this.memory.remember({ sha256, signature: latest.signature ?? null, version: latest.version, reason });
    this.log(`firmware ${latest.version} refused, the installed binary is untouched: ${reason}; not fetched again before ${refusal.retry_at} unless the server offers other firmware`);
    await this.memory.report({ state: 'refused', version: latest.version, sha256, message: reason });
    return { result: 'refused', version: latest.version, reason };
  }

  private async install(latest: FirmwareView, at: { platform: Platform; wanted: string; installed: string; baseline: string | null }): Promise<CheckOutcome> {
    const { binaryPath, service } = this.options;
    const version = latest.version;
    const temp = path.join(path.dirname(binaryPath), `.${path.basename(binaryPath)}.download-${randomBytes(6).toString('hex')}`);
    const previous = `${binaryPath}.previous`;
    let got: string;
    try {
      got = await this.api.download({ ...latest, platform: at.platform }, temp);
    } catch (err) {
      await rm(temp, { force: true });
      if (this.abort.signal.aborted) throw err;
      this.log(`firmware ${version}: the download failed (${(err as Error).message}); trying again next poll`);
      return { result: 'download-failed', version, reason: (err as Error).message };
    }
    if (got !== at.wanted) {
      await rm(temp, { force: true });
      return this.refuse(latest, at.wanted, `SHA-256 mismatch: expected ${at.wanted}, downloaded ${got}`);
    }
    try {
      await chmod(temp, executableMode((await stat(binaryPath)).mode));
      await syncFile(temp);
      await copyFile(binaryPath, previous);
      await syncFile(previous);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }

    let record: UpdateRecord = {
      phase: 'installing',
      version,
      sha256: at.wanted,
      signature: latest.signature ?? null,
      previous,
      previous_sha256: at.installed,
      started_at: this.clock.now().toISOString(),
      baseline: at.baseline,
    };
    try {
      await this.files.writeRecord(record); // before the old binary is touched
    } catch (err) {
      await rm(temp, { force: true });
      throw new Error(`cannot write the update record ${this.files.recordPath}, nothing was touched: ${(err as Error).message}`);
    }
    await this.memory.report({ state: 'installing', version, sha256: at.wanted });
    this.log(`installing firmware ${version}: stopping ${service.description}`);
    try {
      await service.stop();
    } catch (err) {
      await rm(temp, { force: true });
      return this.rollBack(record, `could not stop ${service.description}: ${(err as Error).message}`);
    }
    // Re-read after the stop: a heartbeat the old binary got in meanwhile must not count for the new one.
    const baseline = (await this.api.getAgent().catch(() => null))?.last_heartbeat ?? at.baseline;
    try {
      await rename(temp, binaryPath);
    } catch (err) {
      await rm(temp, { force: true });
      return this.rollBack(record, `could not replace ${binaryPath}: ${(err as Error).message}`);
    }
    await syncDirectory(path.dirname(binaryPath));
    record = { ...record, phase: 'checking', baseline, check_started_at: this.clock.now().toISOString() };
    await this.files.writeRecord(record);
    try {
      await service.start();
    } catch (err) {
      return this.rollBack(record, `could not start the new binary: ${(err as Error).message}`);
    }
    return this.watch(record);
  }

  /** Finishes what a record left by an earlier run (or an interrupted check) says. */
  private async resume(record: UpdateRecord): Promise<CheckOutcome> {
    const { service } = this.options;
    this.log(`resuming the update to firmware ${record.version} (phase ${record.phase}, started ${record.started_at})`);
    if (record.phase === 'passed') return this.passed(record);
    if (record.phase === 'rolling-back') return this.rollBack(record, record.reason ?? 'the rollback was interrupted');
    const current = await sha256OfFile(this.options.binaryPath).catch(() => null);
    if (record.phase === 'installing' && current === record.previous_sha256) {
      // Stopped before the swap: the previous binary is still installed; make sure it runs.
      return this.rollBack(record, 'the installation was interrupted before the binary was replaced');
    }
    if (current !== record.sha256) return this.rollBack(record, 'the installed binary is not the one being checked');
    if (record.phase === 'installing') {
      record = { ...record, phase: 'checking' };
      await this.files.writeRecord(record);
    }
    if (!(await service.isRunning())) return this.rollBack(record, `${service.description} is not running (found when the health check was resumed)`);
    return this.watch(record, true);
  }

  private async watch(record: UpdateRecord, resumed = false): Promise<CheckOutcome> {
    const { service } = this.options;
    const progress = progressOf(record);
    this.log(`firmware ${record.version} ${resumed ? 'runs' : 'started'}; ${timeLeft(this.health, progress, resumed ? this.clock.now().getTime() : progress.since)}`);
    const save = async (p: CheckProgress) => {
      record = { ...record, uncounted_ms: p.uncountedMs, ...(p.firstHeartbeatMs === null ? {} : { first_heartbeat_ms: p.firstHeartbeatMs }) };
      await this.files.writeRecord(record);
    };
    try {
      await checkHealth({ getAgent: () => this.api.getAgent(), service, clock: this.clock, signal: this.abort.signal, log: this.log, save }, this.health, record, progress);
    } catch (err) {
      if (this.abort.signal.aborted) throw err; // stopped: the record stays, the next start resumes
      return this.rollBack(record, (err as Error).message);
    }
    return this.passed(record);
  }

  /** The new binary passed: the server is told (flag cleared, `healthy`), then the record goes. */
  private async passed(record: UpdateRecord): Promise<CheckOutcome> {
    if (record.phase !== 'passed') await this.files.writeRecord({ ...record, phase: 'passed' });
    try {
      await this.api.clearFlag();
    } catch (err) {
      this.log(`firmware ${record.version} passed its health check, but clearing the update request failed (${(err as Error).message}); trying again next poll`);
      return { result: 'updated', version: record.version, reason: 'update request not cleared yet' };
    }
    await this.memory.report({ state: 'healthy', version: record.version, sha256: record.sha256 });
    await this.files.removeRecord();
    await this.memory.forget(record.sha256);
    this.log(`firmware ${record.version} installed and healthy; update request cleared`);
    return { result: 'updated', version: record.version };
  }

  private async rollBack(record: UpdateRecord, reason: string): Promise<CheckOutcome> {
    const { binaryPath, service } = this.options;
    const deps = { binaryPath, service, files: this.files, memory: this.memory, clock: this.clock, signal: this.abort.signal, log: this.log, retry: this.rollbackRetry };
    await rollBack(deps, record, reason);
    return { result: 'rolled-back', version: record.version, reason };
  }
}

/** The old mode with execute added wherever read is allowed, so the new binary runs for the same users. */
function executableMode(oldMode: number): number {
  const mode = oldMode & 0o7777;
  return mode | 0o100 | ((mode & 0o044) >> 2);
}

