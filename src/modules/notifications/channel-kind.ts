// What a channel type is to the rest of the feature (a strategy, so no second switch on the type
// string): its settings schema (defaults applied, unknown fields refused so a secret cannot land in
// the clear-text settings), its secret fields, the check run when it is saved (SSRF rules, the SMTP
// server's verify) and the one try that sends a message. Adapters under adapters/ each define one.
import { z } from 'zod';
import { AppError } from '../../platform/errors.js';
import { checkWebhookUrl } from '../tasks/webhook-target.js';
import type { SendContext } from './http-post.js';
import { notDelivered } from './http-post.js';
import type { DeliveryOutcome, NotificationMessage } from './notification-message.js';

/** A channel's secrets in the clear, only ever inside the service and the adapters. */
export type Secrets = Readonly<Partial<Record<string, string>>>;

export interface SecretField {
  required: boolean;
  schema: z.ZodType<string>;
  description: string;
  /** Never hinted beyond "set" (passwords: any characters shown would weaken them). */
  opaque?: boolean;
  /**
   * Settings that say where this secret goes. When one of them changes, the secret must be given
   * again: otherwise a write key, which can never read the secret, could send it to a server of its own.
   */
  boundTo?: readonly string[];
}

export interface SaveCheck {
  /** The channel will be enabled: checks that talk to the receiver (SMTP verify) run only then. */
  enabled: boolean;
}

interface Behaviour<S> {
  /** Runs before anything is stored; throws AppError (400) naming the field. */
  check(settings: S, secrets: Secrets, ctx: SendContext, save: SaveCheck): Promise<void>;
  /** One try; never throws. */
  send(message: NotificationMessage, settings: S, secrets: Secrets, ctx: SendContext): Promise<DeliveryOutcome>;
}

export interface ChannelKind extends Behaviour<Record<string, unknown>> {
  settings: z.ZodType<Record<string, unknown>>;
  secrets: Readonly<Record<string, SecretField>>;
}

/** Binds typed behaviour to its settings schema; stored settings are parsed again before each use. */
export function channelKind<T extends z.ZodType<Record<string, unknown>>>(
  settings: T,
  secrets: Record<string, SecretField>,
  behaviour: Behaviour<z.output<T>>,
): ChannelKind {
  return {
    settings,
    secrets,
    check: (raw, given, ctx, save) => behaviour.check(settings.parse(raw), given, ctx, save),
    send: async (message, raw, given, ctx) => {
      const parsed = settings.safeParse(raw);
      if (!parsed.success) return notDelivered('the stored channel settings are no longer valid; save the channel again');
      try {
        return await behaviour.send(message, parsed.data, given, ctx);
      } catch (err) {
        ctx.logger.error({ err }, 'notification adapter failed');
        return notDelivered('the message could not be sent (internal error)');
      }
    },
  };
}

const CONTROL = /[\u0000-\u001f\u007f]/; // eslint-disable-line no-control-regex -- what it refuses

/** Text without control characters (they would end a header or a command line). */
export const plain = (max: number, min = 1) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((v) => !CONTROL.test(v), 'must not contain control characters');

/** An http(s) URL of at most 2000 characters, without credentials in it. */
export const httpUrl = () =>
  plain(2000).refine((v) => {
    try {
      const url = new URL(v);
      return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
    } catch {
      return false;
    }
  }, 'must be an http or https URL without a user name or password');

/** A value that may go into an HTTP header (tokens). */
export const headerToken = (max: number) => z.string().min(1).max(max).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/** The task-webhook SSRF rules for a URL about to be saved; the 400 names `path`. */
export async function checkUrl(path: string, url: string, ctx: SendContext): Promise<void> {
  try {
    await checkWebhookUrl(url, { allowLoopback: ctx.allowLoopback, lookup: ctx.lookup });
  } catch (err) {
    throw renamed(err, path);
  }
}

/** The webhook-target error, about `path` instead of webhook_url (with the reason kept). */
export function renamed(err: unknown, path: string): AppError {
  const reason = err instanceof Error ? err.message : String(err);
  const message = reason.replace(/^webhook_url host /, `${path}: host `).replace(/^webhook_url /, `${path} `);
  return new AppError('VALIDATION_ERROR', message, { details: [{ path, message }], cause: err });
}

/** Chat channels whose one secret is the webhook URL itself (Teams, Slack, Discord). */
export const webhookUrlSecret = (vendor: string): Record<string, SecretField> => ({
  webhook_url: { required: true, schema: httpUrl(), description: `The ${vendor} webhook URL (it carries the receiver's credentials, so it is kept sealed)` },
});

export const noSettings = z.strictObject({});
