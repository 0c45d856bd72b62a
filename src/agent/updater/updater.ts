// The on-device updater (contract §9): every poll it asks the server whether an update was requested for
// this agent, and replaces the agent binary only when the flag is set, firmware exists for the platform and
// its SHA-256 differs from the installed file. The new binary is downloaded next to the old one (so the
// final rename is atomic), verified, swapped in with `<binary>.previous` kept, started, and kept only once
// the server has seen a heartbeat from it; otherwise the previous binary is put back and started again.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, copyFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { systemClock, type Clock } from '../../platform/clock.js';
import type { Platform } from '../device-state.js';
import { baseOf, ServerError } from '../server-api.js';
import type { ServiceControl } from './service-control.js';

const REQUEST_TIMEOUT_MS = 30_000;
const DOWNLOAD_TIMEOUT_MS = 30 * 60_000;

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
  /** How long a freshly started binary has to get a heartbeat to the server before it is rolled back. */
  healthTimeoutMs?: number;
  /** How often the health check looks at the server and the service meanwhile. */
  healthPollMs?: number;
  clock?: Clock;
  log?: (line: string) => void;
}

export type CheckResult =
  | 'not-requested' // flag not set: nothing to do
  | 'no-platform' // the server does not know the agent's platform yet and none was configured
  | 'no-firmware' // no firmware for the platform
  | 'already-installed' // installed hash equals the latest: the flag was cleared
  | 'known-bad' // this firmware already failed its health check here: not tried again
  | 'refused' // download failed or its SHA-256 did not match: nothing was touched
  | 'updated' // replaced, started, heartbeat seen, flag cleared
  | 'rolled-back'; // replaced but unhealthy (or could not be stopped/started): the previous binary runs again

export interface CheckOutcome {
  result: CheckResult;
  version?: string;
  reason?: string;
}

/** The fields of GET /agents/{id} and GET /firmware/latest that the updater reads. */
type AgentView = { update_requested: boolean; platform: Platform | null; last_heartbeat: string | null };
type FirmwareView = { version: string; platform: Platform; sha256: string; size: number };

export class Updater {
  private readonly base: URL;
  private readonly clock: Clock;
  private readonly log: (line: string) => void;
  private readonly pollIntervalMs: number;
  private readonly healthTimeoutMs: number;
  private readonly healthPollMs: number;
  private readonly abort = new AbortController();
  /** Firmware that failed its health check on this device; retrying it every poll would only cause outages. */
  private readonly failedSha256 = new Set<string>();
  private inFlight: Promise<CheckOutcome> | null = null;
  private loop: Promise<void> | null = null;

  constructor(private readonly options: UpdaterOptions) {
    this.base = baseOf(options.serverUrl);
    this.clock = options.clock ?? systemClock;
    this.log = options.log ?? (() => undefined);
    this.pollIntervalMs = options.pollIntervalMs ?? 60_000;
    this.healthTimeoutMs = options.healthTimeoutMs ?? 120_000;
    this.healthPollMs = options.healthPollMs ?? 2_000;
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

  /** Ends the loop; a check in progress is cut short (an unconfirmed update is rolled back) and awaited. */
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
    const agent = await this.getAgent();
    if (!agent.update_requested) return { result: 'not-requested' };
    const platform = this.options.platform ?? agent.platform;
    if (!platform) return { result: 'no-platform' };
    const latest = await this.getJson<FirmwareView>('firmware/latest', { platform });
    if (!latest) return { result: 'no-firmware' };
    const wanted = latest.sha256.toLowerCase();
    const installed = await sha256OfFile(this.options.binaryPath);
    if (installed === wanted) {
      // The update already happened (perhaps its clearing request was lost): only the flag is left.
      await this.clearFlag();
      this.log(`firmware ${latest.version} is already installed; update request cleared`);
      return { result: 'already-installed', version: latest.version };
    }
    if (this.failedSha256.has(wanted)) return { result: 'known-bad', version: latest.version };
    return this.install(latest, wanted, agent.last_heartbeat);
  }

  private async install(latest: FirmwareView, wanted: string, heartbeatBefore: string | null): Promise<CheckOutcome> {
    const { binaryPath, service } = this.options;
    const version = latest.version;
    const temp = path.join(path.dirname(binaryPath), `.${path.basename(binaryPath)}.download-${randomBytes(6).toString('hex')}`);
    const previous = `${binaryPath}.previous`;
    try {
      const got = await this.download(latest, temp);
      if (got !== wanted) throw new Error(`SHA-256 mismatch: expected ${wanted}, downloaded ${got}`);
      await chmod(temp, executableMode((await stat(binaryPath)).mode));
      await copyFile(binaryPath, previous);
    } catch (err) {
      await rm(temp, { force: true });
      const reason = (err as Error).message;
      this.log(`firmware ${version} refused, the installed binary is untouched: ${reason}`);
      return { result: 'refused', version, reason };
    }

    this.log(`installing firmware ${version}: stopping ${service.description}`);
    let replaced = false;
    try {
      await service.stop();
      // Re-read after the stop: a heartbeat the old binary got in meanwhile must not count for the new one.
      const baseline = (await this.getAgent().catch(() => null))?.last_heartbeat ?? heartbeatBefore;
      await rename(temp, binaryPath);
      replaced = true;
      await service.start();
      await this.awaitHealthy(baseline);
    } catch (err) {
      const reason = (err as Error).message;
      await rm(temp, { force: true });
      if (replaced) this.failedSha256.add(wanted);
      this.log(`firmware ${version} failed (${reason}); ${replaced ? 'restoring the previous binary' : 'starting the agent again'}, update request kept`);
      return this.rollBack(version, reason, replaced ? previous : null);
    }

    try {
      await this.clearFlag();
      this.log(`firmware ${version} installed and healthy; update request cleared`);
    } catch (err) {
      // The next poll finds the hashes equal and clears the flag then.
      this.log(`firmware ${version} installed, but clearing the update request failed: ${(err as Error).message}`);
    }
    return { result: 'updated', version };
  }

  private async rollBack(version: string, reason: string, previous: string | null): Promise<CheckOutcome> {
    const { binaryPath, service } = this.options;
    try {
      await service.stop().catch(() => undefined); // it may well not be running: that is why we are here
      if (previous) await rename(previous, binaryPath);
      await service.start();
      this.log(`previous binary restored and started`);
    } catch (err) {
      this.log(`ROLLBACK FAILED for firmware ${version}: ${(err as Error).message}; the agent may be down`);
      return { result: 'rolled-back', version, reason: `${reason}; rollback failed: ${(err as Error).message}` };
    }
    return { result: 'rolled-back', version, reason };
  }

  /**
   * Healthy = the server shows a heartbeat newer than `baseline` (the last one it had from the old
   * binary, so both sides of the comparison are server time and device clock skew does not matter)
   * and the service still runs. A service that is no longer running fails at once.
   */
  private async awaitHealthy(baseline: string | null): Promise<void> {
    const { service } = this.options;
    const after = baseline === null ? -Infinity : Date.parse(baseline);
    const deadline = this.clock.now().getTime() + this.healthTimeoutMs;
    for (;;) {
      if (!(await service.isRunning())) throw new Error(`${service.description} is not running after the start`);
      // A failed poll is only a late answer: the deadline decides.
      const seen = (await this.getAgent().catch(() => null))?.last_heartbeat;
      if (seen && Date.parse(seen) > after) {
        if (await service.isRunning()) return;
        throw new Error(`${service.description} sent a heartbeat, then stopped running`);
      }
      if (this.clock.now().getTime() >= deadline) throw new Error(`no heartbeat from the new binary within ${this.healthTimeoutMs / 1000} s`);
      await this.clock.sleep(this.healthPollMs, this.abort.signal);
    }
  }

  /** Streams the firmware to `temp`, hashing on the way; returns the SHA-256 of what arrived. */
  private async download(firmware: FirmwareView, temp: string): Promise<string> {
    const res = await this.call('GET', 'firmware/download', { platform: firmware.platform, version: firmware.version }, DOWNLOAD_TIMEOUT_MS);
    if (!res.ok || !res.body) throw await errorOf(res);
    const hash = createHash('sha256');
    await pipeline(
      Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>),
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          yield chunk;
        }
      },
      createWriteStream(temp, { mode: 0o700 }),
    );
    return hash.digest('hex');
  }

  private async getAgent(): Promise<AgentView> {
    const agent = await this.getJson<AgentView>(`agents/${encodeURIComponent(this.options.agentId)}`);
    if (!agent) throw new Error(`the server does not know agent ${this.options.agentId}`);
    return agent;
  }

  private async clearFlag(): Promise<void> {
    const res = await this.call('DELETE', `agents/${encodeURIComponent(this.options.agentId)}/request-update`);
    if (!res.ok) throw await errorOf(res);
    await res.body?.cancel();
  }

  /** The JSON answer, or null on 404. */
  private async getJson<T>(apiPath: string, query: Record<string, string> = {}): Promise<T | null> {
    const res = await this.call('GET', apiPath, query);
    if (res.ok) return (await res.json()) as T;
    if (res.status !== 404) throw await errorOf(res);
    await res.body?.cancel();
    return null;
  }

  private async call(method: string, apiPath: string, query: Record<string, string> = {}, timeoutMs = REQUEST_TIMEOUT_MS): Promise<Response> {
    const url = new URL(`api/v1/${apiPath}`, this.base);
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    try {
      return await fetch(url, {
        method,
        headers: { 'x-api-key': this.options.apiKey },
        signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(timeoutMs)]),
      });
    } catch (err) {
      if (this.abort.signal.aborted) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (cause?.code ?? cause?.message ?? (err as Error).message);
      throw new Error(`cannot reach the server: ${why}`);
    }
  }
}

async function errorOf(res: Response): Promise<ServerError> {
  const text = await res.text().catch(() => '');
  let body: { error?: unknown; code?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // not JSON: the status and the start of the text say enough
  }
  const message = typeof body.error === 'string' ? body.error : text.slice(0, 200) || res.statusText;
  return new ServerError(res.status, typeof body.code === 'string' ? body.code : null, `HTTP ${res.status}: ${message}`);
}

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The old mode with execute added wherever read is allowed, so the new binary runs for the same users. */
function executableMode(oldMode: number): number {
  const mode = oldMode & 0o7777;
  return mode | 0o100 | ((mode & 0o044) >> 2);
}
