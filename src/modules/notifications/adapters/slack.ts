// Slack incoming webhook: {text, blocks}. `text` is the notification's fallback; the blocks are a header
// and one section per item in Slack's mrkdwn, where &, < and > are escaped so an agent's name cannot
// become a link or an @channel. Slack allows 50 blocks and 3000 characters per section.
import { channelKind, checkUrl, noSettings, webhookUrlSecret } from '../channel-kind.js';
import { postJson } from '../http-post.js';
import type { NotificationItem, NotificationMessage } from '../notification-message.js';
import { firstItems, headline, itemFacts, messageTitle, moreLine, truncate } from '../render.js';

const MAX_ITEMS = 45;

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function section(item: NotificationItem) {
  const lines = itemFacts(item).map(([label, value]) =>
    label === 'Link' ? `<${value.replace(/\|/g, '%7C').replace(/>/g, '%3E')}|Open in console>` : `*${label}:* ${escape(truncate(value, 500))}`,
  );
  const text = `*${escape(truncate(headline(item), 500))}*\n${lines.join('\n')}`;
  return { type: 'section', text: { type: 'mrkdwn', text: truncate(text, 3_000) } };
}

export function slackPayload(message: NotificationMessage) {
  const title = messageTitle(message);
  const { shown, more } = firstItems(message, MAX_ITEMS);
  const blocks: object[] = [{ type: 'header', text: { type: 'plain_text', text: truncate(title, 150), emoji: true } }];
  if (message.test) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: 'This is a test message: the channel works if you can read it.' } });
  blocks.push(...shown.map(section));
  if (more > 0) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: moreLine(more) }] });
  return { text: escape(truncate(title, 1_000)), blocks };
}

export const slackChannel = channelKind(noSettings, webhookUrlSecret('Slack incoming'), {
  check: (_s, secrets, ctx) => checkUrl('secrets.webhook_url', secrets.webhook_url ?? '', ctx),
  send: (message, _s, secrets, ctx) => postJson(ctx, { url: secrets.webhook_url ?? '', body: JSON.stringify(slackPayload(message)) }),
});
