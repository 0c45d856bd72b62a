// The channel types and their strategies (channel-kind.ts), the one place that maps a type name to
// its settings, secrets, save check and sender.
import type { ChannelType } from '../../db/schema.js';
import type { ChannelKind } from './channel-kind.js';
import { discordChannel } from './adapters/discord.js';
import { emailChannel } from './adapters/email.js';
import { ntfyChannel } from './adapters/ntfy.js';
import { slackChannel } from './adapters/slack.js';
import { teamsChannel } from './adapters/teams.js';
import { telegramChannel } from './adapters/telegram.js';
import { webhookChannel } from './adapters/webhook.js';

export const CHANNEL_TYPES = ['email', 'webhook', 'ntfy', 'teams', 'slack', 'discord', 'telegram'] as const satisfies readonly ChannelType[];

export const CHANNEL_KINDS: Readonly<Record<ChannelType, ChannelKind>> = {
  email: emailChannel,
  webhook: webhookChannel,
  ntfy: ntfyChannel,
  teams: teamsChannel,
  slack: slackChannel,
  discord: discordChannel,
  telegram: telegramChannel,
};
