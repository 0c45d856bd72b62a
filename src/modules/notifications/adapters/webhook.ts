// Generic JSON webhook: {event: "alert.notification", delivery_id, test, alerts: [NotificationItem…]},
// signed like task webhooks (x-rmm-signature: sha256=<hex HMAC-SHA256 of the exact body>) with the
// channel's own secret, else the settings' webhook_secret, else unsigned; x-rmm-delivery is the same on
// every try of one message so a receiver can drop repeats.
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { channelKind, checkUrl, httpUrl } from '../channel-kind.js';
import { notDelivered, postJson } from '../http-post.js';

const settings = z.strictObject({ url: httpUrl().describe('Receiver URL (the task-webhook SSRF rules apply)') });

export const webhookChannel = channelKind(
  settings,
  {
    secret: {
      required: false,
      schema: z.string().min(16).max(256),
      description: "HMAC-SHA256 key for x-rmm-signature (default: the settings' webhook_secret)",
    },
  },
  {
    check: (s, _secrets, ctx) => checkUrl('settings.url', s.url, ctx),
    async send(message, s, secrets, ctx) {
      const body = JSON.stringify({ event: 'alert.notification', delivery_id: message.delivery_id, test: message.test, alerts: message.items });
      let key: string | null;
      try {
        key = secrets.secret ?? (await ctx.webhookSecret());
      } catch (err) {
        ctx.logger.error({ err }, 'webhook notification not sent: the webhook secret could not be read');
        return notDelivered('the webhook secret could not be read');
      }
      const headers: Record<string, string> = { 'x-rmm-delivery': message.delivery_id };
      if (key) headers['x-rmm-signature'] = `sha256=${createHmac('sha256', key).update(body, 'utf8').digest('hex')}`;
      return postJson(ctx, { url: s.url, body, headers });
    },
  },
);
