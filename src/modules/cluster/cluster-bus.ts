// The link between instances in cluster mode (issue 32): a NATS connection that never gives up, with
// JSON request/reply and publish. A request tells apart the three failures callers act on: nobody holds
// the subject ("no responders", at once), the holder did not answer in time (it died, or is stuck),
// and the bus itself being down (every request fails at once instead of waiting out its timeout).
// Bus messages stay small: NATS refuses anything over the server's max_payload (1 MB by default)
// before sending, so large answers go through the database (see big-replies.ts).
import { connect, RequestError, TimeoutError, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { Logger } from '../../platform/logger.js';

export type BusFailure = 'no-responders' | 'timeout' | 'unavailable';

export class BusError extends Error {
  constructor(readonly failure: BusFailure, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BusError';
  }
}

/** A reply already written as JSON text (a handler that had to stringify it anyway saves a second pass). */
export class JsonText {
  constructor(readonly text: string) {}
}

/** Answers a request; what it returns (JSON) is the reply. Throwing sends nothing (the asker times out). */
export type BusHandler = (body: unknown, subject: string) => Promise<unknown> | unknown;

/** How fast a dead bus is noticed: a ping every 5 s, two unanswered ones and the link is re-made. */
const PING_INTERVAL_MS = 5_000;
const MAX_PINGS_OUT = 2;

export class ClusterBus {
  #nc: NatsConnection | undefined;
  #available = false;
  /** Fails each request waiting for an answer; called when the link is lost. */
  readonly #waiting = new Set<(err: BusError) => void>();
  readonly #encoder = new TextEncoder();
  readonly #decoder = new TextDecoder();

  constructor(
    private readonly url: string,
    private readonly name: string,
    private readonly logger: Logger,
  ) {}

  /** Connects, and keeps reconnecting forever (the client's default gives up after 10 tries). */
  async start(): Promise<void> {
    this.#nc = await connect({
      servers: this.url.split(',').map((u) => u.trim()),
      name: this.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
      waitOnFirstConnect: true,
      pingInterval: PING_INTERVAL_MS,
      maxPingOut: MAX_PINGS_OUT,
      // No stack trace captured for every request: commands cross the bus one per REST call, and our
      // errors name the subject anyway.
      noAsyncTraces: true,
    });
    this.#available = true;
    void this.#watch(this.#nc);
  }

  /** False while the link to NATS is down: cross-instance work fails at once with CLUSTER_UNAVAILABLE. */
  get available(): boolean {
    return this.#available && this.#nc !== undefined && !this.#nc.isClosed();
  }

  async request(subject: string, body: unknown, timeoutMs: number): Promise<unknown> {
    const nc = this.#connection();
    let msg: Msg;
    const asked = nc.request(subject, this.#encode(body), { timeout: timeoutMs });
    try {
      // A link lost while waiting loses the answer too: fail now, not after the whole timeout. (Not a
      // Promise.race with one long-lived "lost" promise: each race would leave a reaction on it until
      // the link is lost, a leak of one closure per command.)
      msg = await new Promise<Msg>((resolve, reject) => {
        this.#waiting.add(reject);
        asked.then(resolve, reject).finally(() => this.#waiting.delete(reject));
      });
    } catch (err) {
      if (err instanceof BusError) throw err;
      if (err instanceof RequestError && err.isNoResponders()) throw new BusError('no-responders', `nobody holds ${subject}`, { cause: err });
      if (err instanceof TimeoutError || (err instanceof RequestError && err.cause instanceof TimeoutError)) {
        throw new BusError(this.available ? 'timeout' : 'unavailable', `no answer on ${subject} within ${timeoutMs} ms`, { cause: err });
      }
      throw new BusError('unavailable', `the cluster bus failed: ${(err as Error).message}`, { cause: err });
    }
    return this.#decode(msg.data);
  }

  publish(subject: string, body: unknown): void {
    if (!this.available) return;
    try {
      this.#nc!.publish(subject, this.#encode(body));
    } catch (err) {
      this.logger.warn({ err, subject }, 'could not publish on the cluster bus');
    }
  }

  /** Serves requests (and takes publishes) on `subject` until the returned subscription is unsubscribed. */
  subscribe(subject: string, handler: BusHandler, options: { queue?: string } = {}): Subscription {
    // Also while the link is down: the client keeps its subscriptions and makes them again on reconnect.
    const nc = this.#nc;
    if (!nc || nc.isClosed()) throw new BusError('unavailable', 'the cluster bus (NATS) is closed');
    return nc.subscribe(subject, {
      ...options,
      callback: (err, msg) => {
        if (err) return this.logger.warn({ err, subject }, 'cluster bus subscription failed');
        void this.#serve(msg, handler);
      },
    });
  }

  /**
   * Waits until the server has every subscription made so far: right after subscribing, another
   * instance's request could otherwise still find no responder.
   */
  async flush(): Promise<void> {
    if (this.available) await this.#nc!.flush();
  }

  async stop(): Promise<void> {
    this.#available = false;
    const nc = this.#nc;
    this.#nc = undefined;
    if (nc && !nc.isClosed()) await nc.drain().catch(() => nc.close());
  }

  async #serve(msg: Msg, handler: BusHandler): Promise<void> {
    let reply: unknown;
    try {
      reply = await handler(this.#decode(msg.data), msg.subject);
    } catch (err) {
      this.logger.warn({ err, subject: msg.subject }, 'a cluster bus handler failed');
      return;
    }
    if (msg.reply && this.available) msg.respond(this.#encode(reply ?? null));
  }

  async #watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'staleConnection') {
        const lost = new BusError('unavailable', 'the link to NATS was lost while waiting for an answer');
        for (const fail of this.#waiting) fail(lost);
        this.#waiting.clear();
        if (this.#available) this.logger.warn({ nats: this.url.replace(/\/\/[^@/]*@/, '//') }, 'lost the cluster bus (NATS); cross-instance commands answer 503 until it returns');
        this.#available = false;
      } else if (status.type === 'reconnect') {
        this.#available = true;
        this.logger.info('cluster bus (NATS) is back');
      }
    }
  }

  #connection(): NatsConnection {
    if (!this.available) throw new BusError('unavailable', 'the cluster bus (NATS) is not connected');
    return this.#nc!;
  }

  #encode(body: unknown): Uint8Array {
    return this.#encoder.encode(body instanceof JsonText ? body.text : JSON.stringify(body));
  }

  #decode(data: Uint8Array): unknown {
    return data.length === 0 ? null : JSON.parse(this.#decoder.decode(data));
  }
}
