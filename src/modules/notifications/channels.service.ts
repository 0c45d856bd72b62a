// SKELETON (issue 31, being built): notification channels — CRUD with sealed secrets, and delivery of
// one message to one channel through its adapter.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { SecretBox } from '../../platform/secret-box.js';
import type { DeliveryOutcome, NotificationMessage } from './notification-message.js';

export interface ChannelServiceDeps {
  db: Kysely<Database>;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  /** WEBHOOK_ALLOW_LOOPBACK: loopback receivers allowed (local receivers and tests only). */
  allowLoopback: boolean;
  /** The settings' webhook_secret, for webhook channels without their own secret. */
  webhookSecret: () => Promise<string | null>;
}

export class ChannelService {
  constructor(readonly deps: ChannelServiceDeps) {}

  /** Sends one message to one channel: one try, never throws; the outcome says what the receiver answered. */
  async deliver(channelId: number, message: NotificationMessage, signal?: AbortSignal): Promise<DeliveryOutcome> {
    void channelId;
    void message;
    void signal;
    return { delivered: false, status_code: null, error: 'channels are not built yet', answer: null };
  }
}
