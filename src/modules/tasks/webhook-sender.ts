// Outbound task webhooks (contract §10): one signed JSON POST per finished run, up to three tries with
// backoff, and an outcome the run stores. Every try checks the target again (webhook-target.ts) and
// connects to exactly the address that passed, so a host name cannot be re-pointed at a forbidden
// address between the check and the connection. Redirects are never followed: the Location would be an
// unchecked target. The single try (pinnedPost) is exported for notification channels, which POST the
// same way but make one try per call and keep the start of the receiver's answer.
import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isAppError } from '../../platform/errors.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { resolveWebhookAddress, UnresolvableHostError, type LookupFn, type WebhookTarget } from './webhook-target.js';

export const WEBHOOK_TIMEOUT_MS = 10_000;
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [1_000, 5_000];
const MAX_ATTEMPTS = 3;
/** Receivers' answers are not used; reading a little lets a well-behaved one finish its response. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'rmm-backend-webhook';

/** What became of one delivery; stored on the run. */
export interface WebhookDelivery {
  url: string;
  /** Tries made; 0 when the target was refused before any request. */
  attempts: number;
  delivered: boolean;
  /** Status of the last answer; null when the last try got none (refused, timeout, connection error). */
  status_code: number | null;
  /** Why the last try failed; null when delivered. */
  error: string | null;
  last_attempt_at: string;
}

export interface WebhookSenderOptions {
  /** Backoff waits go through the clock, so tests move time instead of sleeping. */
  clock: Clock;
  allowLoopback: boolean;
  /** The settings' webhook_secret, read once per delivery. */
  secret: () => Promise<string | null>;
  logger: Logger;
  /** Limit for one try, from connecting to the end of the answer. */
  timeoutMs?: number;
  /** Waits before the second and third tries. */
  retryDelaysMs?: readonly number[];
  lookup?: LookupFn;
}

interface TryOutcome {
  status_code: number | null;
  error: string | null;
}

export class WebhookSender {
  readonly #options: WebhookSenderOptions;
  readonly #timeoutMs: number;
  readonly #retryDelaysMs: readonly number[];

  constructor(options: WebhookSenderOptions) {
    this.#options = options;
    this.#timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
    this.#retryDelaysMs = options.retryDelaysMs ?? WEBHOOK_RETRY_DELAYS_MS;
  }

  /**
   * POSTs `payload` as JSON. With a webhook secret set, `x-rmm-signature: sha256=<hex HMAC-SHA256 of the
   * exact body bytes>` lets the receiver verify it; with none set the header is omitted (not sent empty),
   * so receivers that require signatures refuse the call. `x-rmm-delivery` is the same on every try of
   * one delivery, so a receiver can drop a repeat whose earlier answer was lost. Success is a 2xx answer;
   * anything else is tried again after the next backoff delay, three tries at most. Never throws.
   * An aborted `signal` (shutdown) ends the delivery as not delivered.
   */
  async deliver(url: string, payload: object, options: { signal?: AbortSignal } = {}): Promise<WebhookDelivery> {
    const { clock, logger } = this.#options;
    const origin = safeOrigin(url); // paths often carry the receiver's token, so logs name the origin only
    const body = Buffer.from(JSON.stringify(payload), 'utf8');
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-rmm-delivery': randomUUID(),
    };
    let outcome: TryOutcome = { status_code: null, error: null };
    let attempts = 0;
    let lastAttemptAt = clock.now().toISOString();
    const result = (delivered: boolean): WebhookDelivery => ({ url, attempts, delivered, ...outcome, last_attempt_at: lastAttemptAt });

    try {
      const secret = await this.#options.secret();
      if (secret) headers['x-rmm-signature'] = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    } catch (err) {
      logger.error({ err, webhook: origin }, 'webhook not sent: the webhook secret could not be read');
      outcome = { status_code: null, error: 'the webhook secret could not be read' };
      return result(false);
    }

    for (;;) {
      if (options.signal?.aborted) {
        outcome = { status_code: null, error: 'delivery stopped (server shutting down)' };
        return result(false);
      }
      lastAttemptAt = clock.now().toISOString();
      let target: WebhookTarget | null = null;
      try {
        target = await resolveWebhookAddress(url, { allowLoopback: this.#options.allowLoopback, lookup: this.#options.lookup });
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (!(err instanceof UnresolvableHostError)) {
          // Refused (or malformed): no request is made now or later.
          logger.warn({ webhook: origin, reason: message }, 'webhook refused at send time');
          outcome = { status_code: null, error: isAppError(err) ? message : 'webhook_url could not be checked' };
          return result(false);
        }
        outcome = { status_code: null, error: message };
      }
      attempts++;
      if (target) outcome = await this.#post(target, headers, body, options.signal);
      const delivered = outcome.status_code !== null && outcome.status_code >= 200 && outcome.status_code < 300;
      if (delivered) return result(true);
      logger.warn({ webhook: origin, attempt: attempts, status_code: outcome.status_code, reason: outcome.error }, 'webhook try failed');
      if (attempts >= MAX_ATTEMPTS) return result(false);
      const delay = this.#retryDelaysMs[attempts - 1] ?? this.#retryDelaysMs.at(-1) ?? 0;
      try {
        await clock.sleep(delay, options.signal);
      } catch {
        // Aborted during the backoff: the check at the top of the loop ends the delivery.
      }
    }
  }

  /** One try: a POST to the checked address, resolving with the answer's status or the failure. */
  async #post(target: WebhookTarget, headers: Record<string, string>, body: Buffer, signal: AbortSignal | undefined): Promise<TryOutcome> {
    const { status_code, error } = await pinnedPost(target, headers, body, { timeoutMs: this.#timeoutMs, signal });
    return { status_code, error };
  }
}

/** What one pinned POST got: the status (null when no answer arrived), why it failed, and the answer's start. */
export interface PinnedPostResult {
  status_code: number | null;
  /** Null for a 2xx answer. */
  error: string | null;
  /** The first bytes of the answer's body as text (at most ANSWER_BYTES), or null when none arrived. */
  answer: string | null;
}

const ANSWER_BYTES = 2048;

/**
 * One POST to the address a webhook-target check returned: the connection resolves the URL's host to
 * exactly that address, TLS still verifies the certificate for the URL's name, redirects are not
 * followed, and `timeoutMs` bounds the whole try (connect to the end of the answer). Never rejects.
 * Shared by task webhooks and notification channels.
 */
export function pinnedPost(
  target: WebhookTarget,
  headers: Record<string, string>,
  body: Buffer,
  options: { timeoutMs: number; signal?: AbortSignal | undefined },
): Promise<PinnedPostResult> {
  const { url } = target;
  const { signal, timeoutMs } = options;
  const transport = url.protocol === 'https:' ? https : http;
  // Whatever the connection asks to resolve, it gets the address that was checked.
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  return new Promise<PinnedPostResult>((resolve) => {
    let statusCode: number | null = null;
    const kept: Buffer[] = [];
    let received = 0;
    let settled = false;
    const answer = () => (statusCode === null ? null : Buffer.concat(kept).subarray(0, ANSWER_BYTES).toString('utf8'));
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      req.destroy();
      if (statusCode === null) return resolve({ status_code: null, error: error ?? 'no answer', answer: null });
      // Once the status has arrived, it decides the try, even if reading the rest then fails.
      const ok = statusCode >= 200 && statusCode < 300;
      const redirect = statusCode >= 300 && statusCode < 400 ? ' (redirects are not followed)' : '';
      resolve({ status_code: statusCode, error: ok ? null : `receiver answered HTTP ${statusCode}${redirect}`, answer: answer() });
    };
    const onAbort = () => finish('delivery stopped (server shutting down)');

    let req: http.ClientRequest;
    try {
      req = transport.request({
        method: 'POST',
        hostname: target.hostname,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        lookup: pinned,
        agent: false, // no pooled sockets: each try connects to the address just checked
        // TLS verifies the certificate for the URL's name; SNI must not carry an IP literal.
        servername: isIP(target.hostname) ? undefined : target.hostname,
        headers: { ...headers, host: url.host, 'content-length': String(body.length) },
      });
    } catch (err) {
      // Invalid header values are refused before any connection; callers validate them, this is the backstop.
      settled = true;
      resolve({ status_code: null, error: `request not sent: ${err instanceof Error ? err.message : String(err)}`, answer: null });
      return;
    }
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err) => finish(`request failed: ${err.message}`));
    req.on('response', (res) => {
      statusCode = res.statusCode ?? null;
      res.on('data', (chunk: Buffer) => {
        if (received < ANSWER_BYTES) kept.push(chunk);
        received += chunk.length;
        if (received >= MAX_RESPONSE_BYTES) finish(null);
      });
      res.on('end', () => finish(null));
      res.on('error', (err) => finish(`reading the answer failed: ${err.message}`));
    });
    req.end(body);
  });
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}
