// Rendering a NotificationMessage in words, shared by every channel: the facts of each item (customer,
// agent name and hostname, what happened, since when, the console link), a plain-text body, an HTML
// body with every value escaped (agent names and summaries come from devices and are hostile), length
// limits that cut with an ellipsis, and the sample item a test message carries.
import type { NotificationEvent, NotificationItem, NotificationMessage } from './notification-message.js';
import { headline, messageTitle } from './notification-message.js';

export { headline, messageTitle };

/** How each event looks in chat: a colour (Discord, Teams) and ntfy tags (which ntfy shows as emoji). */
export const EVENT_STYLE: Record<NotificationEvent, { color: number; tag: string; teams: 'attention' | 'good' | 'warning' | 'accent' }> = {
  firing: { color: 0xd93025, tag: 'rotating_light', teams: 'attention' },
  reminder: { color: 0xe8710a, tag: 'rotating_light', teams: 'attention' },
  flapping: { color: 0xf9ab00, tag: 'warning', teams: 'warning' },
  resolved: { color: 0x1e8e3e, tag: 'white_check_mark', teams: 'good' },
  acknowledged: { color: 0x1a73e8, tag: 'eyes', teams: 'accent' },
};

/** "2026-01-01 12:00:00 UTC" from an RFC 3339 time; anything else as it is. */
export function readableTime(value: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?Z$/.exec(value);
  return m ? `${m[1]} ${m[2]} UTC` : value;
}

/** The labelled facts of one item, in the order every channel shows them. */
export function itemFacts(item: NotificationItem): Array<[string, string]> {
  const facts: Array<[string, string]> = [];
  if (item.customer) facts.push(['Customer', `${item.customer.name} (${item.customer.number})`]);
  facts.push(['Agent', item.agent.name]);
  if (item.agent.hostname) facts.push(['Hostname', item.agent.hostname]);
  facts.push(['What', item.summary]);
  facts.push(['Since', readableTime(item.since)]);
  if (item.by) facts.push([item.event === 'acknowledged' ? 'Acknowledged by' : 'By', item.comment ? `${item.by}: ${item.comment}` : item.by]);
  if (item.link) facts.push(['Link', item.link]);
  return facts;
}

/** At most `max` characters; a cut text ends with an ellipsis. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, Math.max(0, max - 1)).replace(/[\ud800-\udbff]$/, '')}…`;
}

/** The first `max` items, and how many were left out. */
export function firstItems(message: NotificationMessage, max: number): { shown: NotificationItem[]; more: number } {
  return { shown: message.items.slice(0, max), more: Math.max(0, message.items.length - max) };
}

export const moreLine = (more: number) => `… and ${more} more`;

/** One block of text per item: its headline, then its facts indented. */
export function itemText(item: NotificationItem): string {
  return [headline(item), ...itemFacts(item).map(([label, value]) => `  ${label}: ${value}`)].join('\n');
}

/** The whole message as plain text (email body, ntfy and Telegram messages before their limits). */
export function plainText(message: NotificationMessage): string {
  const intro = message.test ? 'This is a test message: the channel works if you can read it.\n\n' : '';
  return `${intro}${message.items.map(itemText).join('\n\n')}\n`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Only http(s) links become anchors; anything else stays text. */
function safeHref(link: string): string | null {
  try {
    const url = new URL(link);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** The message as a small HTML document (the email's HTML alternative); every value escaped. */
export function htmlBody(message: NotificationMessage): string {
  const items = message.items.map((item) => {
    const style = `#${EVENT_STYLE[item.event].color.toString(16).padStart(6, '0')}`;
    const rows = itemFacts(item).map(([label, value]) => {
      const href = label === 'Link' ? safeHref(value) : null;
      const cell = href ? `<a href="${escapeHtml(href)}">${escapeHtml(value)}</a>` : escapeHtml(value);
      return `<tr><th align="left" style="padding-right:12px">${escapeHtml(label)}</th><td>${cell}</td></tr>`;
    });
    return `<h3 style="color:${style};margin-bottom:4px">${escapeHtml(headline(item))}</h3>\n<table>${rows.join('')}</table>`;
  });
  const intro = message.test ? '<p>This is a test message: the channel works if you can read it.</p>\n' : '';
  return `<!doctype html>\n<html><body style="font-family:sans-serif">\n<h2>${escapeHtml(messageTitle(message))}</h2>\n${intro}${items.join('\n')}\n</body></html>\n`;
}

/** The one item of a test message: plainly a test, for this channel's customer when it has one. */
export function sampleItem(customer: NotificationItem['customer'], at: Date): NotificationItem {
  return {
    event: 'firing',
    alert_id: null,
    rule_id: null,
    rule_name: 'Test notification',
    kind: 'test',
    customer,
    agent: { id: 'test', name: 'Test agent', hostname: 'test.example' },
    label: '',
    summary: 'A test notification from the RMM server; no alert has fired',
    value: null,
    threshold: null,
    since: at.toISOString(),
    at: at.toISOString(),
    by: null,
    comment: null,
    link: null,
  };
}
