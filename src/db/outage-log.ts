// Bounded logging of a database outage. While PostgreSQL is away every query fails, hundreds a second
// under load (each heartbeat, each pooled connection's error event); a line each buried the log. The
// first failure is logged at once; the ones after it within the interval are counted and written as one
// summary line when the interval ends, so a long outage costs a line per interval and nothing is hidden.

export interface WarnLog {
  warn(fields: object, message: string): void;
}

/**
 * What is worth logging of a connection failure: the code and message of its innermost cause (services
 * wrap the driver's error; the stack is the driver's own and says nothing).
 */
export function failureSummary(err: unknown): { code?: string; message: string } {
  let inner = err;
  for (let depth = 0; depth < 5 && typeof inner === 'object' && inner !== null && (inner as { cause?: unknown }).cause !== undefined; depth++) {
    inner = (inner as { cause?: unknown }).cause;
  }
  const { code, message } = (typeof inner === 'object' && inner !== null ? inner : {}) as { code?: unknown; message?: unknown };
  return { ...(typeof code === 'string' ? { code } : {}), message: typeof message === 'string' ? message : String(inner) };
}

export class OutageLog {
  #windowEndsAt = Number.NEGATIVE_INFINITY;
  #counted = 0;
  #latest: unknown;
  #summary: NodeJS.Timeout | undefined;

  constructor(
    private readonly message: string,
    /** Where summary lines go (the first line of a window goes to the log given to report). */
    private readonly logger: WarnLog,
    private readonly everyMs = 10_000,
  ) {}

  /** One failure: logged (to `log`, e.g. the request's logger) when it opens a window, else counted. */
  report(err: unknown, log: WarnLog = this.logger): void {
    const now = performance.now();
    if (now >= this.#windowEndsAt) {
      this.#windowEndsAt = now + this.everyMs;
      log.warn({ error: failureSummary(err) }, this.message);
      return;
    }
    this.#counted++;
    this.#latest = err;
    // unref: a pending summary must not keep a stopping process alive.
    if (this.#summary === undefined) this.#summary = setTimeout(() => this.#summarise(), this.#windowEndsAt - now).unref();
  }

  #summarise(): void {
    this.#summary = undefined;
    const counted = this.#counted;
    this.#counted = 0;
    // The next window starts now: failures still coming in are summed up again in one interval.
    this.#windowEndsAt = performance.now() + this.everyMs;
    this.logger.warn({ error: failureSummary(this.#latest), count: counted }, `${this.message} (${counted} more in ${this.everyMs / 1000} s)`);
  }
}
