// A background loop for the server's periodic work (status monitor, metrics maintenance, notification
// delivery): runs the job, sleeps its interval on the injected clock, repeats until stopped. A failed
// run is logged (a database outage as one, see logFailure) and tried again next interval; wake() cuts the sleep short (work just arrived); stop()
// aborts the sleep and waits for a run in progress to finish.
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';
import { logFailure } from '../db/db-errors.js';

export class PeriodicJob {
  #controller: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(
    private readonly name: string,
    private readonly clock: Clock,
    private readonly intervalMs: number,
    private readonly logger: Logger,
    private readonly run: (signal: AbortSignal) => Promise<unknown>,
  ) {}

  start(): void {
    if (this.#controller) return;
    const controller = new AbortController();
    this.#controller = controller;
    this.#loop = (async () => {
      while (!controller.signal.aborted) {
        try {
          await this.run(controller.signal);
        } catch (err) {
          logFailure(this.logger, err, {}, `${this.name} failed; trying again next interval`);
        }
        // stop() during the run: no nap (a listener added to an already aborted signal never fires).
        if (controller.signal.aborted) break;
        // A nap that wake() or stop() cuts short.
        const nap = new AbortController();
        const onStop = () => nap.abort();
        controller.signal.addEventListener('abort', onStop, { once: true });
        this.#wake = () => nap.abort();
        await this.clock.sleep(this.intervalMs, nap.signal).catch(() => undefined);
        controller.signal.removeEventListener('abort', onStop);
        this.#wake = undefined;
      }
    })();
  }

  /** Runs the job now instead of at the end of the interval (no effect while it runs or is stopped). */
  wake(): void {
    this.#wake?.();
  }

  async stop(): Promise<void> {
    this.#controller?.abort();
    await this.#loop;
    this.#controller = undefined;
    this.#loop = undefined;
  }
}
