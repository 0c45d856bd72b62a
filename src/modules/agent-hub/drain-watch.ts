// "Tell me when this WebSocket's send queue is short again", for tunnel backpressure on both ends of
// the agent socket. `ws` has no drain event, and polling bufferedAmount on a timer leaves the pipe idle
// between polls (at 300 MiB/s a 5 ms poll is 1.5 MiB of lost transfer per pause). Instead every send
// passes `sent` as its callback, which `ws` calls once that frame reached the kernel, so the queue is
// checked exactly when it shrinks. A slow timer covers frames sent without the callback.
export interface SendQueue {
  /** Bytes queued for sending and not yet handed to the network. */
  readonly bufferedAmount: number;
}

/** While someone waits and no callback came, the queue is also looked at this often. */
const FALLBACK_CHECK_MS = 50;

export class DrainWatch {
  #waiters: Array<() => void> = [];
  #fallback: NodeJS.Timeout | undefined;

  constructor(
    private readonly queue: SendQueue,
    private readonly lowWater: number,
  ) {}

  /** The send callback: pass it to every `send` on the socket. */
  readonly sent = (): void => {
    if (this.#waiters.length > 0 && this.queue.bufferedAmount <= this.lowWater) this.#wake();
  };

  /** Calls `resume` once the queue is at or below the low-water mark (at once if it already is). */
  whenDrained(resume: () => void): void {
    if (this.queue.bufferedAmount <= this.lowWater) {
      queueMicrotask(resume);
      return;
    }
    this.#waiters.push(resume);
    this.#fallback ??= setInterval(this.sent, FALLBACK_CHECK_MS);
  }

  /** The socket is gone: everyone waiting resumes (and finds it closed). */
  release(): void {
    this.#wake();
  }

  #wake(): void {
    clearInterval(this.#fallback);
    this.#fallback = undefined;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resume of waiters) resume();
  }
}
