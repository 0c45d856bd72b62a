// Telegram: POST {api_url}/bot{token}/sendMessage with {chat_id, text, disable_web_page_preview}. Plain
// text (no parse_mode), so nothing an agent reports can turn into markup; Telegram's limit is 4096
// characters. The token is in the URL path, so only the api_url's origin is ever logged.
import { z } from 'zod';
import { channelKind, checkUrl, httpUrl } from '../channel-kind.js';
import { postJson } from '../http-post.js';
import type { NotificationMessage } from '../notification-message.js';
import { messageTitle, plainText, truncate } from '../render.js';

const settings = z.strictObject({
  chat_id: z
    .string()
    .regex(/^(-?\d{1,20}|@[A-Za-z0-9_]{4,64})$/, 'must be a numeric chat id or @channelname')
    .describe('Numeric chat id (groups are negative) or @channelname'),
  api_url: httpUrl().default('https://api.telegram.org').describe('Bot API server (a local Bot API server, or the default)'),
});

export function telegramPayload(message: NotificationMessage, chatId: string) {
  const text = `${messageTitle(message)}\n\n${plainText(message).trimEnd()}`;
  return { chat_id: chatId, text: truncate(text, 4_096), disable_web_page_preview: true };
}

/** {api_url}/bot{token}/sendMessage, whatever path, query or trailing slash api_url has. */
function methodUrl(apiUrl: string, token: string): string {
  const url = new URL(apiUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/bot${token}/sendMessage`;
  url.search = '';
  url.hash = '';
  return url.href;
}

export const telegramChannel = channelKind(
  settings,
  {
    bot_token: {
      required: true,
      schema: z.string().regex(/^\d{1,20}:[A-Za-z0-9_-]{20,100}$/, 'must be a bot token as BotFather gives it (123456:ABC…)'),
      description: 'The bot token from BotFather',
      boundTo: ['api_url'],
    },
  },
  {
    check: (s, _secrets, ctx) => checkUrl('settings.api_url', s.api_url, ctx),
    send: (message, s, secrets, ctx) =>
      postJson(ctx, {
        url: methodUrl(s.api_url, secrets.bot_token ?? ''),
        body: JSON.stringify(telegramPayload(message, s.chat_id)),
      }),
  },
);
