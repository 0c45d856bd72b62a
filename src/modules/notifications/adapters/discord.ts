// Discord webhook: {content, embeds: [{title, description, url, color}], allowed_mentions}. One embed per
// item in its event's colour, within Discord's limits: content 2000 characters, 10 embeds (the tenth
// lists what did not fit), titles 256, descriptions 4096 and 6000 characters over all embeds. Markdown
// in agent data is escaped and mentions are off, so a hostname like "@everyone" pings nobody.
import { channelKind, checkUrl, noSettings, webhookUrlSecret } from '../channel-kind.js';
import { postJson } from '../http-post.js';
import type { NotificationItem, NotificationMessage } from '../notification-message.js';
import { EVENT_STYLE, headline, itemFacts, messageTitle, moreLine, truncate } from '../render.js';

const MAX_EMBEDS = 10;
const EMBED_TOTAL = 6_000;
const TITLE = 256;
const DESCRIPTION = 4_096;

const escape = (text: string) => text.replace(/[\\*_~`|[\]<>]/g, '\\$&');

const httpLink = (link: string | null) => (link && /^https?:\/\//i.test(link) ? link : undefined);

function embed(item: NotificationItem, budget: number) {
  const lines = itemFacts(item)
    .filter(([label]) => label !== 'Link')
    .map(([label, value]) => `**${label}:** ${escape(truncate(value, 500))}`);
  const url = httpLink(item.link);
  return {
    title: truncate(headline(item), TITLE),
    description: truncate(lines.join('\n'), Math.min(DESCRIPTION, budget)),
    ...(url ? { url } : {}),
    color: EVENT_STYLE[item.event].color,
  };
}

export function discordPayload(message: NotificationMessage) {
  const items = message.items;
  const fits = items.length <= MAX_EMBEDS;
  const shown = fits ? items : items.slice(0, MAX_EMBEDS - 1);
  const rest = fits ? [] : items.slice(MAX_EMBEDS - 1);
  const count = shown.length + (rest.length > 0 ? 1 : 0);
  // Titles take at most 256 each; the descriptions share what is left of the 6000.
  const budget = Math.floor((EMBED_TOTAL - 100 - count * TITLE) / Math.max(count, 1));
  const embeds: object[] = shown.map((item) => embed(item, budget));
  if (rest.length > 0) {
    const list = rest.map((item) => `• ${escape(truncate(headline(item), 200))}`).join('\n');
    embeds.push({ title: moreLine(rest.length), description: truncate(list, Math.min(DESCRIPTION, budget)), color: EVENT_STYLE[rest[0]!.event].color });
  }
  const intro = message.test ? '\nThis is a test message: the channel works if you can read it.' : '';
  return { content: truncate(`${messageTitle(message)}${intro}`, 2_000), embeds, allowed_mentions: { parse: [] } };
}

export const discordChannel = channelKind(noSettings, webhookUrlSecret('Discord'), {
  check: (_s, secrets, ctx) => checkUrl('secrets.webhook_url', secrets.webhook_url ?? '', ctx),
  send: (message, _s, secrets, ctx) => postJson(ctx, { url: secrets.webhook_url ?? '', body: JSON.stringify(discordPayload(message)) }),
});
