// ntfy: one JSON publish to the server's root URL ({topic, title, message, priority, tags, click}),
// optionally with a Bearer access token. ntfy turns messages over 4096 bytes into attachments, so the
// text is cut below that; tags name emoji (🚨 firing, ✅ resolved). Without a configured priority,
// anything firing is high (4) and the rest default (3).
import { z } from 'zod';
import { channelKind, checkUrl, headerToken, httpUrl } from '../channel-kind.js';
import { postJson } from '../http-post.js';
import type { NotificationMessage } from '../notification-message.js';
import { EVENT_STYLE, messageTitle, plainText, truncate } from '../render.js';

const settings = z.strictObject({
  server_url: httpUrl().default('https://ntfy.sh').describe('The ntfy server; messages are published to this URL as JSON'),
  topic: z.string().regex(/^[-_A-Za-z0-9]{1,64}$/, 'must be 1 to 64 letters, digits, - or _'),
  priority: z.number().int().min(1).max(5).optional().describe('1 (min) to 5 (max); default 4 while anything fires, else 3'),
});

const URGENT = new Set(['firing', 'reminder', 'flapping']);

export function ntfyPayload(message: NotificationMessage, s: z.output<typeof settings>) {
  const urgent = message.items.some((i) => URGENT.has(i.event));
  const tags = [...new Set(message.items.map((i) => EVENT_STYLE[i.event].tag))];
  const click = message.items.find((i) => i.link)?.link;
  return {
    topic: s.topic,
    title: truncate(messageTitle(message), 250),
    message: truncate(plainText(message).trimEnd(), 3_500),
    priority: s.priority ?? (urgent && !message.test ? 4 : 3),
    tags: message.test ? ['test_tube', ...tags] : tags,
    ...(click ? { click } : {}),
  };
}

export const ntfyChannel = channelKind(
  settings,
  {
    token: { required: false, schema: headerToken(512), description: 'Access token, sent as Authorization: Bearer', boundTo: ['server_url'] },
  },
  {
    check: (s, _secrets, ctx) => checkUrl('settings.server_url', s.server_url, ctx),
    send: (message, s, secrets, ctx) =>
      postJson(ctx, {
        url: s.server_url,
        body: JSON.stringify(ntfyPayload(message, s)),
        headers: secrets.token ? { authorization: `Bearer ${secrets.token}` } : {},
      }),
  },
);
