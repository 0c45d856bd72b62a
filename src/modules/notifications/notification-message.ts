// What a notification says, independent of the channel that carries it: the outbox stores one item per
// alert event, the dispatcher groups a channel's due items into one message, and each channel adapter
// renders the message in its receiver's format (email, JSON webhook, ntfy, Teams, Slack, Discord,
// Telegram).
import type { NotificationEvent } from '../../db/schema.js';

export type { NotificationEvent } from '../../db/schema.js';

/** One alert event in a message, as it was when queued. */
export interface NotificationItem {
  event: NotificationEvent;
  alert_id: number | null;
  rule_id: number | null;
  rule_name: string;
  /** The rule's kind (agent_offline, metric_threshold, …) or `flapping`. */
  kind: string;
  customer: { id: number; number: string; name: string } | null;
  agent: { id: string; name: string; hostname: string };
  /** Mount point, interface, gateway, certificate name or task; "" when the rule has none. */
  label: string;
  /** What crossed which threshold, e.g. "disk_used_percent on / is 93.1 (> 90) since 12:00 UTC". */
  summary: string;
  value: number | null;
  threshold: number | null;
  /** When the condition began (RFC 3339). */
  since: string;
  /** When this event happened: fired, resolved, reminded, acknowledged (RFC 3339). */
  at: string;
  /** Who acknowledged or resolved it by hand, and their comment; null otherwise. */
  by: string | null;
  comment: string | null;
  /** The agent's page in the console (PUBLIC_URL, else the settings' backend_url); null when neither is set. */
  link: string | null;
}

export interface NotificationMessage {
  /** Same on every try of one message, so a receiver can drop a repeat whose answer was lost. */
  delivery_id: string;
  items: NotificationItem[];
  /** True for POST /notification-channels/{id}/test. */
  test: boolean;
}

/** What became of one try to deliver a message. */
export interface DeliveryOutcome {
  delivered: boolean;
  /** HTTP status of the receiver's answer (SMTP: the reply code); null when there was none. */
  status_code: number | null;
  /** Why it failed; null when delivered. */
  error: string | null;
  /** The start of the receiver's answer (at most 500 characters), for the test button; null when none. */
  answer: string | null;
}

/** One line per item, for subjects and plain-text bodies. */
export function headline(item: NotificationItem): string {
  const who = item.agent.name === item.agent.hostname || !item.agent.hostname ? item.agent.name : `${item.agent.name} (${item.agent.hostname})`;
  const customer = item.customer ? `${item.customer.name}: ` : '';
  return `${EVENT_WORDS[item.event]} ${customer}${who}: ${item.summary}`;
}

export const EVENT_WORDS: Record<NotificationEvent, string> = {
  firing: '[FIRING]',
  resolved: '[RESOLVED]',
  reminder: '[STILL FIRING]',
  flapping: '[FLAPPING]',
  acknowledged: '[ACKNOWLEDGED]',
};

/** A short title for a whole message: the one item's headline, or a count. */
export function messageTitle(message: NotificationMessage): string {
  if (message.test) return 'RMM test notification';
  if (message.items.length === 1) return headline(message.items[0]!);
  const firing = message.items.filter((i) => i.event === 'firing' || i.event === 'reminder' || i.event === 'flapping').length;
  const resolved = message.items.filter((i) => i.event === 'resolved').length;
  const parts = [firing ? `${firing} firing` : '', resolved ? `${resolved} resolved` : ''].filter(Boolean);
  return `RMM alerts: ${parts.join(', ') || `${message.items.length} updates`}`;
}
