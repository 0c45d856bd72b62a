// The one way an HTTP notification channel sends: a JSON POST, checked against the task-webhook SSRF
// rules at send time (the name may point elsewhere since the channel was saved) and sent to exactly
// the address that passed (webhook-sender.ts pinnedPost), one try bounded by the timeout. Logs name
// the origin only: chat webhook paths and Telegram's bot path carry the receiver's credentials.
import { isAppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import { pinnedPost } from '../tasks/webhook-sender.js';
import { resolveWebhookAddress, UnresolvableHostError, type LookupFn } from '../tasks/webhook-target.js';
import type { DeliveryOutcome } from './notification-message.js';

/** Per try, from the DNS check to the end of the answer (as task webhooks). */
export const CHANNEL_TIMEOUT_MS = 10_000;
/** DeliveryOutcome.answer holds at most this much of the receiver's answer. */
const ANSWER_CHARS = 500;
const USER_AGENT = 'rmm-backend-notifications';

/** What a channel needs to send: the SSRF switch, a logger, the abort signal and the limit per try. */
export interface SendContext {
  allowLoopback: boolean;
  logger: Logger;
  signal?: AbortSignal | undefined;
  timeoutMs: number;
  lookup?: LookupFn | undefined;
  /** The settings' webhook_secret (webhook channels without their own secret). */
  webhookSecret(): Promise<string | null>;
}

export interface JsonPost {
  url: string;
  /** Serialised once: the bytes sent are the bytes signed. */
  body: string;
  headers?: Record<string, string>;
}

export function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

export const notDelivered = (error: string, status_code: number | null = null, answer: string | null = null): DeliveryOutcome => ({
  delivered: false,
  status_code,
  error,
  answer,
});

/** One POST of `post.body` as JSON; never throws. Delivered means a 2xx answer. */
export async function postJson(ctx: SendContext, post: JsonPost): Promise<DeliveryOutcome> {
  const where = origin(post.url);
  if (ctx.signal?.aborted) return notDelivered('delivery stopped (server shutting down)');
  let target;
  try {
    target = await resolveWebhookAddress(post.url, { allowLoopback: ctx.allowLoopback, lookup: ctx.lookup });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // The target module names the field webhook_url; here the refusal is about the channel's URL.
    const reason = isAppError(err) ? message.replace(/^webhook_url/, 'the channel URL') : 'the channel URL could not be checked';
    if (!(err instanceof UnresolvableHostError)) ctx.logger.warn({ channel: where, reason }, 'notification refused at send time');
    return notDelivered(reason);
  }
  const body = Buffer.from(post.body, 'utf8');
  const headers = { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...post.headers };
  const result = await pinnedPost(target, headers, body, { timeoutMs: ctx.timeoutMs, signal: ctx.signal });
  const answer = result.answer === null ? null : result.answer.slice(0, ANSWER_CHARS);
  if (result.error === null) return { delivered: true, status_code: result.status_code, error: null, answer };
  ctx.logger.warn({ channel: where, status_code: result.status_code, reason: result.error }, 'notification try failed');
  return notDelivered(result.error, result.status_code, answer);
}
