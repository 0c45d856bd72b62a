// Log lines that a peer can repeat at will (malformed agent frames, refused connections, a database
// away for a minute under every agent's writes) are bounded: the first of a kind is logged as it
// happens, the rest of its window are counted, and one summary line per window says how many there
// were, so a long flood costs a line per window and nothing is hidden. Issue 29 measured 9.7 MiB of
// warnings in 5 s from one agent sending garbage frames.

/** The part of a pino logger used here (a request's child logger will do). */
export interface LevelLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface LogThrottleOptions {
  /** One line per kind per window, plus a summary when more came (default 60 s). */
  windowMs?: number;
  /** Kinds tracked at once; further kinds share one overflow entry (keys may come from peers). */
  maxKinds?: number;
}

type Level = 'warn' | 'info' | 'error';

interface Window {
  level: Level;
  message: string;
  fields: Record<string, unknown>;
  suppressed: number;
  timer: NodeJS.Timeout;
}

const OVERFLOW = '(other kinds)';

export class LogThrottle {
  readonly #windows = new Map<string, Window>();
  readonly #windowMs: number;
  readonly #maxKinds: number;

  constructor(
    private readonly logger: LevelLog,
    options: LogThrottleOptions = {},
  ) {
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxKinds = options.maxKinds ?? 1000;
  }

  /** `firstTo`: where the first line of a window goes (e.g. the request's logger); summaries go to the throttle's own. */
  warn(kind: string, fields: Record<string, unknown>, message: string, firstTo?: LevelLog): void {
    this.#note('warn', kind, fields, message, firstTo);
  }

  info(kind: string, fields: Record<string, unknown>, message: string, firstTo?: LevelLog): void {
    this.#note('info', kind, fields, message, firstTo);
  }

  error(kind: string, fields: Record<string, unknown>, message: string, firstTo?: LevelLog): void {
    this.#note('error', kind, fields, message, firstTo);
  }

  /** Writes the pending summaries now (at shutdown) and forgets every window. */
  flush(): void {
    for (const [kind, window] of [...this.#windows]) {
      clearTimeout(window.timer);
      this.#summarise(window);
      this.#windows.delete(kind);
    }
  }

  #note(level: Level, kind: string, fields: Record<string, unknown>, message: string, firstTo: LevelLog = this.logger): void {
    const key = this.#windows.has(kind) || this.#windows.size < this.#maxKinds ? kind : OVERFLOW;
    const open = this.#windows.get(key);
    if (open) {
      open.suppressed++;
      open.fields = fields;
      return;
    }
    firstTo[level](fields, message);
    this.#windows.set(key, { level, message, fields, suppressed: 0, timer: this.#closeLater(key) });
  }

  /** At the end of a window: a summary if more came, and another window while they keep coming. */
  #closeLater(key: string): NodeJS.Timeout {
    // A real timer, unref'd: it only decides when a summary is written, and must not hold the process open.
    const timer = setTimeout(() => {
      const window = this.#windows.get(key);
      if (!window) return;
      if (window.suppressed === 0) {
        this.#windows.delete(key);
        return;
      }
      this.#summarise(window);
      window.suppressed = 0;
      window.timer = this.#closeLater(key);
    }, this.#windowMs);
    timer.unref();
    return timer;
  }

  #summarise(window: Window): void {
    if (window.suppressed === 0) return;
    const seconds = Math.round(this.#windowMs / 1000);
    this.logger[window.level]({ ...window.fields, repeated: window.suppressed }, `${window.message} (${window.suppressed} more like this in ${seconds} s)`);
  }
}
