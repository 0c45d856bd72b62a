// Typed domain events between features (house rule 11): a feature announces what happened
// (`task.run-finished`, `heartbeats.committed`, …) and the features that care subscribe, so no feature
// calls another by name and the composition root threads no callbacks. Dispatch is synchronous and
// in subscription order: the emitter's hot path pays one Map lookup and the handlers' own work. With
// emit, a handler that throws or rejects is logged as an error and never reaches the emitter.

import type { Logger } from './logger.js';

type Handler<T> = (payload: T) => void | Promise<void>;

export class EventBus<Events extends object> {
  readonly #handlers = new Map<keyof Events, Array<Handler<never>>>();

  constructor(private readonly logger: Pick<Logger, 'error'>) {}

  /** Subscribes to one event; the returned function unsubscribes. */
  on<K extends keyof Events>(event: K, handler: Handler<Events[K]>): () => void {
    const list = this.#handlers.get(event) ?? [];
    this.#handlers.set(event, [...list, handler as Handler<never>]);
    return () => {
      this.#handlers.set(event, (this.#handlers.get(event) ?? []).filter((h) => h !== handler));
    };
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const list = this.#handlers.get(event) as Array<Handler<Events[K]>> | undefined;
    if (list === undefined) return;
    for (const handler of list) {
      try {
        const result = handler(payload);
        if (result instanceof Promise) result.catch((err: unknown) => this.#failed(event, err));
      } catch (err) {
        this.#failed(event, err);
      }
    }
  }

  /**
   * Runs every handler and waits for them all, for an emitter whose next step must come after the
   * reactions (the status monitor's next pass after the offline alerts it caused); rejects with the
   * first failure, which the emitter reports in its own words.
   */
  async emitAndWait<K extends keyof Events>(event: K, payload: Events[K]): Promise<void> {
    const list = (this.#handlers.get(event) ?? []) as Array<Handler<Events[K]>>;
    await Promise.all(list.map(async (handler) => handler(payload)));
  }

  #failed(event: keyof Events, err: unknown): void {
    this.logger.error({ err, event }, 'a reaction to an event failed');
  }
}
