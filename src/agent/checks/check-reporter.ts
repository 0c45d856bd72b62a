// Sends check results as check_results frames. A result whose state differs from its check's previous
// one goes out within changeDelayMs (a short debounce gathers the changes of one moment into one frame);
// the others wait for the next frame, at the latest reportIntervalMs later (at the agent's own random
// point of each interval, so a fleet's frames are spread over the minute), so the perfdata of every run
// arrives in about one frame per minute. Every frame carries all that waits, oldest first: a frame never
// holds a result older than one already sent, so the server can take the last result as the current one.
// While the socket is down only the latest result of each check is kept, plus the state changes.
import { MAX_MESSAGE_BYTES } from '../../modules/agent-hub/agent-protocol.js';
import { MAX_RESULTS_PER_FRAME, type CheckResult, type CheckResultsFrame } from '../../modules/checks/check-protocol.js';

export interface CheckReporterOptions {
  /** Sends one text frame; false when the socket is not open (the reporter keeps what it could not send). */
  send: (text: string) => boolean;
  /** How soon a state change goes out; default 2 s. */
  changeDelayMs?: number;
  /** How often the other results go out; default 60 s. */
  reportIntervalMs?: number;
  log?: (line: string) => void;
  /** Draws this agent's point in the report interval (tests fix it). */
  random?: () => number;
}

interface Pending {
  result: CheckResult;
  changed: boolean;
}

/** A frame of this many bytes leaves room under the message limit for the rest of the JSON. */
const FRAME_BYTES = MAX_MESSAGE_BYTES - 64 * 1024;
/** Kept at most while the socket is down: the latest of each of 500 checks and their state changes. */
const MAX_PENDING = MAX_RESULTS_PER_FRAME;

export class CheckReporter {
  private version: string | null = null;
  private ids = new Set<string>();
  private readonly previous = new Map<string, number>();
  private pending: Pending[] = [];
  private changeTimer: NodeJS.Timeout | undefined;
  /** Armed by the first result that waits: an agent without checks holds no timer. */
  private batchTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  /**
   * The batches go out at this agent's own point of every interval (a random one). Timed from the
   * first waiting result instead, the batches of 10,000 agents that got one policy at the same moment
   * arrived as one wave a minute (bench/checks.ts); spread, the server takes them as evenly as they
   * are produced. (The heartbeat p99 the bench measured with checks barely moved: 77.9 → 72.0 ms in
   * the server; the wave was not its cause, see bench/history/2026-11-30.md.)
   */
  private readonly phaseMs: number;

  constructor(private readonly options: CheckReporterOptions) {
    const interval = options.reportIntervalMs ?? 60_000;
    this.phaseMs = Date.now() + Math.floor((options.random ?? Math.random)() * interval);
  }

  /** Until this agent's next point in the report interval: never longer than the interval. */
  private untilNextBatch(): number {
    const interval = this.options.reportIntervalMs ?? 60_000;
    const since = (((Date.now() - this.phaseMs) % interval) + interval) % interval;
    return interval - since;
  }

  /**
   * The set whose results are reported from now on. Waiting results of checks still in it are sent
   * under the new version; those of removed checks are dropped with their previous states.
   */
  setVersion(version: string, checkIds: readonly string[]): void {
    this.version = version;
    this.ids = new Set(checkIds);
    this.pending = this.pending.filter((p) => this.ids.has(p.result.check_id));
    for (const id of this.previous.keys()) if (!this.ids.has(id)) this.previous.delete(id);
  }

  /** Checks whose definition changed: their next result counts as a change, as a new check's does. */
  forget(checkIds: readonly string[]): void {
    for (const id of checkIds) this.previous.delete(id);
  }

  /** One finished run. The first result of a check (since the agent started) counts as a change. */
  add(result: CheckResult): void {
    if (this.stopped || !this.ids.has(result.check_id)) return;
    const changed = this.previous.get(result.check_id) !== result.state;
    this.previous.set(result.check_id, result.state);
    this.pending.push({ result, changed });
    if (changed) this.changeTimer ??= setTimeout(() => this.flush(), this.options.changeDelayMs ?? 2000);
    // Also while the socket is down: each failed flush compacts what waits, so it stays bounded.
    this.batchTimer ??= setTimeout(() => this.flush(), this.untilNextBatch());
  }

  /** The socket is open again: what waited goes out now. */
  connected(): void {
    if (this.pending.length > 0) this.flush();
  }

  /** How many results wait to be sent. */
  get waiting(): number {
    return this.pending.length;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.changeTimer);
    clearTimeout(this.batchTimer);
  }

  /** Sends everything that waits; what cannot be sent is compacted and kept. */
  flush(): void {
    clearTimeout(this.changeTimer);
    clearTimeout(this.batchTimer);
    this.changeTimer = undefined;
    this.batchTimer = undefined;
    if (this.stopped || this.version === null || this.pending.length === 0) return;
    const results = this.pending.map((p) => p.result);
    let sent = 0;
    for (const frame of this.frames(results)) {
      if (!this.options.send(JSON.stringify(frame))) break;
      sent += frame.results.length;
    }
    this.pending = this.pending.slice(sent);
    if (this.pending.length > 0) this.compact();
  }

  /** Frames of at most MAX_RESULTS_PER_FRAME results and FRAME_BYTES each. */
  private *frames(results: CheckResult[]): Generator<CheckResultsFrame> {
    let batch: CheckResult[] = [];
    let bytes = 0;
    for (const result of results) {
      const size = Buffer.byteLength(JSON.stringify(result)) + 1;
      if (batch.length > 0 && (batch.length >= MAX_RESULTS_PER_FRAME || bytes + size > FRAME_BYTES)) {
        yield { type: 'check_results', version: this.version!, results: batch };
        batch = [];
        bytes = 0;
      }
      batch.push(result);
      bytes += size;
    }
    if (batch.length > 0) yield { type: 'check_results', version: this.version!, results: batch };
  }

  /** Not connected: keep the state changes and the latest result of each check, at most MAX_PENDING. */
  private compact(): void {
    const latest = new Map<string, number>();
    this.pending.forEach((p, i) => latest.set(p.result.check_id, i));
    let kept = this.pending.filter((p, i) => p.changed || latest.get(p.result.check_id) === i);
    if (kept.length > MAX_PENDING) {
      this.options.log?.(`checks: ${kept.length - MAX_PENDING} results dropped while disconnected`);
      kept = kept.slice(-MAX_PENDING);
    }
    this.pending = kept;
  }
}
