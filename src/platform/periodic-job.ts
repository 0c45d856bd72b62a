// A background loop for the server's periodic work (status monitor, metrics maintenance): runs the job,
// sleeps its interval on the injected clock, repeats until stopped. A failed run is logged and tried
// again next interval; stop() aborts the sleep and waits for a run in progress to finish.
import type { Clock } from './clock.js';
import type { Logger } from './logger.js';

export class PeriodicJob {
  #controller: AbortController | undefined;
  #loop: Promise<void> | undefined;

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
          this.logger.error({ err }, `${this.name} failed; trying again next interval`);
        }
        await this.clock.sleep(this.intervalMs, controller.signal).catch(() => undefined);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#controller?.abort();
    await this.#loop;
    this.#controller = undefined;
    this.#loop = undefined;
  }
}
