// What the updater remembers between polls and restarts, on disk (update-state.ts): firmware that failed
// here (its hash, its signature, its health check), held back with a doubling wait so that a bad build
// is neither fetched in full nor tried again every poll, and forgotten as soon as the server offers other
// firmware; and the latest report the server could not be told yet, sent with a later poll.
import type { Clock } from '../../platform/clock.js';
import type { Refusal, UpdaterMemory, UpdaterReport, UpdateStateFiles } from './update-state.js';

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export class FirmwareMemory {
  private memory: UpdaterMemory | null = null;
  /** Hold-backs already logged by this process (one line per firmware and back-off, not one per poll). */
  private readonly logged = new Set<string>();

  constructor(
    private readonly files: UpdateStateFiles,
    private readonly api: { report(report: UpdaterReport): Promise<void> },
    private readonly clock: Clock,
    private readonly log: (line: string) => void,
    private readonly backoff: Backoff,
  ) {}

  /** Whether this firmware failed here and its wait has not ended (then it is not fetched). */
  async holdsBack(sha256: string, signature: string | null, version: string): Promise<boolean> {
    const memory = await this.load();
    const refusal = memory.refusal;
    if (!refusal) return false;
    if (refusal.sha256 !== sha256 || refusal.signature !== signature) {
      this.log(`the server offers firmware ${version} (${sha256}); the earlier refusal of firmware ${refusal.version} is forgotten`);
      await this.save({ ...memory, refusal: undefined });
      return false;
    }
    if (this.clock.now().getTime() < Date.parse(refusal.retry_at)) {
      const key = `${sha256}|${refusal.retry_at}`;
      if (!this.logged.has(key)) {
        this.logged.add(key);
        this.log(`firmware ${version} failed here before (${refusal.reason}); not fetched again before ${refusal.retry_at}`);
      }
      return true;
    }
    this.log(`firmware ${version} failed here ${refusal.failures} time(s), last: ${refusal.reason}; its wait has ended, trying it again`);
    return false;
  }

  /** Records a failure of this firmware; the wait doubles with each failure up to the maximum. */
  async remember(failed: { sha256: string; signature: string | null; version: string; reason: string }): Promise<Refusal> {
    const memory = await this.load();
    const before = memory.refusal;
    const failures = before && before.sha256 === failed.sha256 && before.signature === failed.signature ? before.failures + 1 : 1;
    const waitMs = Math.min(this.backoff.initialMs * 2 ** Math.min(failures - 1, 30), this.backoff.maxMs);
    const refusal: Refusal = { ...failed, failures, retry_at: new Date(this.clock.now().getTime() + waitMs).toISOString() };
    await this.save({ ...memory, refusal });
    return refusal;
  }

  /** Forgets a failure of this firmware (it has now passed). */
  async forget(sha256: string): Promise<void> {
    const memory = await this.load();
    if (memory.refusal?.sha256 === sha256) await this.save({ ...memory, refusal: undefined });
  }

  /** Tells the server; when it cannot be told now, the report is kept and sent with a later poll. */
  async report(report: UpdaterReport): Promise<void> {
    try {
      await this.api.report(report);
    } catch (err) {
      this.log(`could not report "${report.state}" to the server (${(err as Error).message}); it is sent with a later poll`);
      await this.save({ ...(await this.load()), unsent_report: report });
      return;
    }
    const memory = await this.load();
    if (memory.unsent_report) await this.save({ ...memory, unsent_report: undefined }); // superseded
  }

  /** Sends the report kept from an earlier failure, if any; quietly keeps it when that fails again. */
  async sendUnsentReport(): Promise<void> {
    const memory = await this.load();
    const report = memory.unsent_report;
    if (!report) return;
    try {
      await this.api.report(report);
    } catch {
      return;
    }
    this.log(`reported "${report.state}" for firmware ${report.version ?? '?'} (kept from earlier)`);
    await this.save({ ...(await this.load()), unsent_report: undefined });
  }

  private async load(): Promise<UpdaterMemory> {
    this.memory ??= await this.files.readMemory();
    return this.memory;
  }

  private async save(memory: UpdaterMemory): Promise<void> {
    const clean: UpdaterMemory = {
      ...(memory.refusal ? { refusal: memory.refusal } : {}),
      ...(memory.unsent_report ? { unsent_report: memory.unsent_report } : {}),
    };
    await this.files.writeMemory(clean);
    this.memory = clean;
  }
}
