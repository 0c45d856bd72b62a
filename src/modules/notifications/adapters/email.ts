// Email over SMTP with nodemailer (STARTTLS, implicit TLS, AUTH and verify() are protocol work we should
// not write ourselves). The SMTP host may be on loopback or a private network (mail relays live there)
// but never on a link-local or cloud-metadata address: it is checked when saved and again before each
// connection, and nodemailer connects to the address that passed while TLS verifies the host's name.
// Saving an enabled channel asks the server (verify: connect, TLS, AUTH); a refusal is a 400 with its answer.
import { isIP } from 'node:net';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { z } from 'zod';
import { AppError, isAppError } from '../../../platform/errors.js';
import { resolveWebhookAddress } from '../../tasks/webhook-target.js';
import { channelKind, plain, renamed, type Secrets } from '../channel-kind.js';
import { notDelivered, type SendContext } from '../http-post.js';
import type { DeliveryOutcome, NotificationMessage } from '../notification-message.js';
import { htmlBody, messageTitle, plainText, truncate } from '../render.js';

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*\.?$/;
const address = z.email().max(254);
/** `rmm@example.com` or `RMM Alerts <rmm@example.com>`. */
const FROM = /^(?:([^<>"\u0000-\u001f\u007f]{1,100}?) ?<([^<>\s]+)>|([^<>\s]+))$/; // eslint-disable-line no-control-regex -- refuses them

const settings = z.strictObject({
  host: z
    .string()
    .max(253)
    .refine((v) => isIP(v) !== 0 || HOST_NAME.test(v), 'must be a host name or an IP address')
    .describe('SMTP server (loopback and private addresses are allowed; link-local and cloud metadata are not)'),
  port: z.number().int().min(1).max(65_535).default(587),
  security: z.enum(['starttls', 'tls', 'none']).default('starttls').describe('starttls: required upgrade (587); tls: TLS from the start (465); none: no encryption'),
  username: plain(256).optional().describe('AUTH user name; the password is the secret `password`'),
  from: plain(320)
    .refine((v) => {
      const m = FROM.exec(v);
      return m !== null && address.safeParse(m[2] ?? m[3]).success;
    }, 'must be an address, optionally with a name: "RMM <rmm@example.com>"')
    .describe('Sender, e.g. "RMM Alerts <rmm@example.com>"'),
  to: z.array(address).min(1).max(20).describe('Recipients (1 to 20)'),
});
type EmailSettings = z.output<typeof settings>;

/** The checked address of the SMTP host; a refusal names settings.host. */
async function smtpAddress(s: EmailSettings, ctx: SendContext): Promise<string> {
  const host = isIP(s.host) === 6 ? `[${s.host}]` : s.host;
  try {
    // The webhook rules with loopback allowed: link-local, unspecified and metadata addresses are refused.
    const target = await resolveWebhookAddress(`http://${host}:${s.port}/`, { allowLoopback: true, lookup: ctx.lookup });
    return target.address;
  } catch (err) {
    throw renamed(err, 'settings.host');
  }
}

function transport(s: EmailSettings, secrets: Secrets, hostAddress: string, ctx: SendContext) {
  const options: SMTPTransport.Options = {
    host: hostAddress,
    port: s.port,
    secure: s.security === 'tls',
    requireTLS: s.security === 'starttls',
    ignoreTLS: s.security === 'none',
    // Certificates are checked for the name that was configured, not the address connected to.
    tls: isIP(s.host) ? {} : { servername: s.host.replace(/\.$/, '') },
    connectionTimeout: ctx.timeoutMs,
    greetingTimeout: ctx.timeoutMs,
    socketTimeout: ctx.timeoutMs,
    logger: false,
    debug: false,
  };
  if (s.username !== undefined) options.auth = { user: s.username, pass: secrets.password ?? '' };
  return nodemailer.createTransport(options);
}

/** The work, or a rejection after `ms` or when `signal` aborts; nodemailer's own timeouts close the socket. */
function bounded<T>(work: Promise<T>, ms: number, signal: AbortSignal | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`no answer within ${ms} ms`)), ms);
    const onAbort = () => done(new Error('delivery stopped (server shutting down)'));
    signal?.addEventListener('abort', onAbort, { once: true });
    function done(err: Error | null, value?: T) {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(value as T);
    }
    work.then((value) => done(null, value), (err: unknown) => done(err instanceof Error ? err : new Error(String(err))));
  });
}

interface SmtpError extends Error {
  responseCode?: number;
  response?: string;
}

const smtpCode = (response: string | undefined): number | null => {
  const m = /^(\d{3})\b/.exec(response ?? '');
  return m ? Number(m[1]) : null;
};

/** Subjects must stay one header line whatever the agent's data holds. */
const oneLine = (text: string) => text.replace(/[\u0000-\u001f\u007f]+/g, ' '); // eslint-disable-line no-control-regex -- replaces them

async function send(message: NotificationMessage, s: EmailSettings, secrets: Secrets, ctx: SendContext): Promise<DeliveryOutcome> {
  let hostAddress: string;
  try {
    hostAddress = await smtpAddress(s, ctx);
  } catch (err) {
    ctx.logger.warn({ smtp_host: s.host, reason: (err as Error).message }, 'email refused at send time');
    return notDelivered(isAppError(err) ? err.message : 'the SMTP host could not be checked');
  }
  const mail: Mail.Options & { signal?: AbortSignal } = {
    from: s.from,
    to: s.to,
    subject: truncate(oneLine(messageTitle(message)), 250),
    text: plainText(message),
    html: htmlBody(message),
    headers: { 'X-RMM-Delivery': message.delivery_id },
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  };
  try {
    const info = await bounded(transport(s, secrets, hostAddress, ctx).sendMail(mail), ctx.timeoutMs, ctx.signal);
    const refused = info.rejected.map(String);
    const answer = `${info.response}${refused.length ? ` (refused: ${refused.join(', ')})` : ''}`;
    return { delivered: true, status_code: smtpCode(info.response), error: null, answer: truncate(answer, 500) };
  } catch (err) {
    const e = err as SmtpError;
    ctx.logger.warn({ smtp_host: s.host, status_code: e.responseCode ?? null, reason: e.message }, 'email try failed');
    return notDelivered(`SMTP: ${truncate(e.message, 480)}`, e.responseCode ?? smtpCode(e.response), e.response ? truncate(e.response, 500) : null);
  }
}

export const emailChannel = channelKind(
  settings,
  {
    password: {
      required: false,
      schema: z.string().min(1).max(256),
      description: 'SMTP AUTH password (with settings.username)',
      opaque: true,
      boundTo: ['host', 'port', 'security'],
    },
  },
  {
    async check(s, secrets, ctx, save) {
      if (s.username !== undefined && secrets.password === undefined) {
        const message = 'secrets.password is required when settings.username is set';
        throw new AppError('VALIDATION_ERROR', message, { details: [{ path: 'secrets.password', message }] });
      }
      const hostAddress = await smtpAddress(s, ctx);
      if (!save.enabled) return;
      try {
        await bounded(transport(s, secrets, hostAddress, ctx).verify(), ctx.timeoutMs, ctx.signal);
      } catch (err) {
        const answer = truncate((err as Error).message, 480);
        throw new AppError('CHANNEL_CHECK_FAILED', `The SMTP server did not accept the settings: ${answer}`, { details: [{ path: 'settings', message: answer }] });
      }
    },
    send,
  },
);
