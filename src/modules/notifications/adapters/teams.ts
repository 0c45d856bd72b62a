// Microsoft Teams through a Workflows webhook ("When a Teams webhook request is received"): a message
// with one Adaptive Card 1.4 attachment. Each item is a container in its event's style with its
// headline, its facts and a button to the agent's console page. Teams refuses cards over about 28 KB,
// so at most 20 items are shown and long values are cut.
import { channelKind, checkUrl, noSettings, webhookUrlSecret } from '../channel-kind.js';
import { postJson } from '../http-post.js';
import type { NotificationItem, NotificationMessage } from '../notification-message.js';
import { EVENT_STYLE, firstItems, headline, itemFacts, messageTitle, moreLine, truncate } from '../render.js';

const MAX_ITEMS = 20;
const COLOR = { attention: 'Attention', good: 'Good', warning: 'Warning', accent: 'Accent' } as const;

function itemContainer(item: NotificationItem) {
  const style = EVENT_STYLE[item.event].teams;
  const facts = itemFacts(item).filter(([label]) => label !== 'Link');
  return {
    type: 'Container',
    style,
    items: [
      { type: 'TextBlock', text: truncate(headline(item), 500), weight: 'Bolder', color: COLOR[style], wrap: true },
      { type: 'FactSet', facts: facts.map(([title, value]) => ({ title, value: truncate(value, 500) })) },
      ...(item.link ? [{ type: 'ActionSet', actions: [{ type: 'Action.OpenUrl', title: 'Open in console', url: item.link }] }] : []),
    ],
  };
}

export function teamsPayload(message: NotificationMessage) {
  const { shown, more } = firstItems(message, MAX_ITEMS);
  const body: object[] = [{ type: 'TextBlock', text: truncate(messageTitle(message), 250), weight: 'Bolder', size: 'Medium', wrap: true }];
  if (message.test) body.push({ type: 'TextBlock', text: 'This is a test message: the channel works if you can read it.', wrap: true });
  body.push(...shown.map(itemContainer));
  if (more > 0) body.push({ type: 'TextBlock', text: moreLine(more), isSubtle: true, wrap: true });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body,
          msteams: { width: 'Full' },
        },
      },
    ],
  };
}

export const teamsChannel = channelKind(noSettings, webhookUrlSecret('Teams Workflows'), {
  check: (_s, secrets, ctx) => checkUrl('secrets.webhook_url', secrets.webhook_url ?? '', ctx),
  send: (message, _s, secrets, ctx) => postJson(ctx, { url: secrets.webhook_url ?? '', body: JSON.stringify(teamsPayload(message)) }),
});
