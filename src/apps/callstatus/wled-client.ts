// WLED light devices (contract §12): a light change is one POST /json/state per segment. Requests to
// one device go one at a time (WLED handles one well, and a burst of call events for users sharing a
// strip must not interleave), each job within REQUEST_TIMEOUT_MS in total. Effect names are resolved
// to indices through GET /json/eff, cached per device.

/** The whole job for one light change, effect lookup included. */
export const REQUEST_TIMEOUT_MS = 3_000;

export interface LightChange {
  /** `host` or `host:port`, as stored for the device. */
  hostname: string;
  segment: number;
  rgb: readonly [number, number, number];
  /** '' (solid), an effect index as text, or an effect name. */
  effect: string;
}

export interface LightResult {
  /** What was sent, for the activity log: `POST http://host/json/state {json}`. */
  request: string;
  /** `HTTP 200`, or the error text. */
  result: string;
}

export class WledClient {
  /** The tail of each device's queue: the next job starts when it settles. */
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #effects = new Map<string, string[]>();

  constructor(private readonly timeoutMs = REQUEST_TIMEOUT_MS) {}

  /** Sets one segment; never throws: failures come back as the result text. */
  set(change: LightChange): Promise<LightResult> {
    const previous = this.#queues.get(change.hostname) ?? Promise.resolve();
    const job = previous.then(() => this.#send(change));
    const tail = job.catch(() => undefined);
    this.#queues.set(change.hostname, tail);
    // Forget an idle device's queue so the map does not grow with every hostname ever used.
    void tail.then(() => {
      if (this.#queues.get(change.hostname) === tail) this.#queues.delete(change.hostname);
    });
    return job;
  }

  async #send(change: LightChange): Promise<LightResult> {
    const url = `http://${change.hostname}/json/state`;
    const signal = AbortSignal.timeout(this.timeoutMs);
    let note = '';
    let fx = 0;
    try {
      const effect = await this.#effectIndex(change.hostname, change.effect, signal);
      fx = effect.index;
      note = effect.note;
    } catch (err) {
      note = ` (effect "${change.effect}" not resolved: ${describe(err, this.timeoutMs)}; solid used)`;
    }
    const body = { on: true, seg: [{ id: change.segment, on: true, col: [[...change.rgb]], fx }] };
    const request = `POST ${url} ${JSON.stringify(body)}`;
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal, redirect: 'error' });
      await res.arrayBuffer().catch(() => undefined); // release the connection
      return { request, result: `HTTP ${res.status}${note}` };
    } catch (err) {
      return { request, result: `${describe(err, this.timeoutMs)}${note}` };
    }
  }

  async #effectIndex(hostname: string, effect: string, signal: AbortSignal): Promise<{ index: number; note: string }> {
    const name = effect.trim();
    if (name === '') return { index: 0, note: '' };
    if (/^\d{1,3}$/.test(name)) return { index: Number(name), note: '' };
    let names = this.#effects.get(hostname);
    if (!names) {
      const res = await fetch(`http://${hostname}/json/eff`, { signal, redirect: 'error' });
      if (!res.ok) throw new Error(`GET /json/eff answered HTTP ${res.status}`);
      const list: unknown = await res.json();
      if (!Array.isArray(list) || !list.every((n) => typeof n === 'string')) throw new Error('GET /json/eff did not answer a list of names');
      names = list as string[];
      this.#effects.set(hostname, names);
    }
    const index = names.findIndex((n) => n.toLowerCase() === name.toLowerCase());
    return index >= 0 ? { index, note: '' } : { index: 0, note: ` (effect "${name}" unknown to the device; solid used)` };
  }
}

function describe(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `timed out after ${timeoutMs / 1000} s`;
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return err instanceof Error ? `${err.message}${cause}` : String(err);
}
