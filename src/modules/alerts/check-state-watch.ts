// Alert rules on checks' states (issue 61) are judged when a check changes state, not only on the
// minute's timer: at once, and again when a failing check will have been failing for a rule's
// for_seconds. Only while alerting runs here (on the cluster's leader); the timer's pass covers the rest.
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';

/** Past the due time, so the check is certainly past for_seconds when looked at. */
const MARGIN_MS = 500;

export class CheckStateWatch {
  #running = false;
  #queue: Promise<void> = Promise.resolve();
  #timer: AbortController | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** Judges every check-state rule; resolves with when to look again (ms since the epoch), or null. */
    private readonly judge: () => Promise<number | null>,
  ) {}

  start(): void {
    this.#running = true;
    this.changed();
  }

  /** A check changed state (or it is time to look again). */
  changed(): void {
    if (!this.#running) return;
    this.#queue = this.#queue
      .then(async () => this.#lookAgainAt(await this.judge()))
      .catch((err: unknown) => this.logger.warn({ err }, 'check-state alert rules not judged; the next pass will'));
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#timer?.abort();
    await this.#queue;
  }

  #lookAgainAt(due: number | null): void {
    this.#timer?.abort();
    this.#timer = null;
    if (due === null || !this.#running) return;
    const timer = new AbortController();
    this.#timer = timer;
    this.clock.sleep(Math.max(0, due - this.clock.now().getTime()) + MARGIN_MS, timer.signal).then(
      () => this.changed(),
      () => undefined,
    );
  }
}
