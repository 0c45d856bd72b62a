// Delivers the notification outbox (issue 31): every few seconds (and at once when woken) it claims the
// due rows, sends each channel's rows as one message (at most 50 items), and records the outcome. A
// failed message is tried again with backoff from 30 s doubling to 1 h, 10 tries in all; then its rows
// are given up, and the failure shows on their alerts and on the channel's status. Nothing is lost when
// a receiver is down or the server restarts: a row leaves the outbox only once delivered or given up.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { PeriodicJob } from '../../platform/periodic-job.js';
import { setDeliveryError } from '../alerts/alerts.repo.js';
import type { DeliveryOutcome, NotificationItem, NotificationMessage } from './notification-message.js';
import { channelStates, claimDue, markDelivered, markFailed, type OutboxRow } from './outbox.repo.js';

export const MAX_TRIES = 10;
const FIRST_RETRY_MS = 30_000;
const LONGEST_RETRY_MS = 3_600_000;
const MAX_ITEMS_PER_MESSAGE = 50;
const POLL_MS = 5_000;

export interface MessageSender {
  deliver(channelId: number, message: NotificationMessage, signal?: AbortSignal): Promise<DeliveryOutcome>;
}

/** Wait before try n + 1 after n failed tries: 30 s, 1 min, 2 min, … at most 1 h. */
export function retryDelayMs(failedTries: number): number {
  return Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failedTries - 1));
}

export class OutboxDispatcher {
  readonly #job: PeriodicJob;
  #running: Promise<number> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly sender: MessageSender,
    pollMs = POLL_MS,
  ) {
    this.#job = new PeriodicJob('notification delivery pass', clock, pollMs, logger, (signal) => this.runOnce(signal));
  }

  /** One pass: sends everything due now; returns how many messages it tried. Passes never overlap. */
  runOnce(signal?: AbortSignal): Promise<number> {
    const previous = this.#running ?? Promise.resolve(0);
    const next = previous.catch(() => 0).then(() => this.#pass(signal));
    this.#running = next;
    return next;
  }

  async #pass(signal?: AbortSignal): Promise<number> {
    const now = this.clock.now();
    const rows = await claimDue(this.db, now);
    if (rows.length === 0) return 0;
    // A message tried before is sent again with exactly its rows, so its delivery id always names the
    // same items (a receiver may drop a repeat by that id); rows not tried yet make the channel's new
    // messages, even when they fell due in the same pass as a retry.
    const byMessage = new Map<string, OutboxRow[]>();
    for (const row of rows) {
      const key = `${row.channel_id}:${row.delivery_id ?? ''}`;
      byMessage.set(key, [...(byMessage.get(key) ?? []), row]);
    }
    const states = await channelStates(this.db, rows.map((r) => r.channel_id));
    let messages = 0;
    for (const messageRows of byMessage.values()) {
      const channelId = messageRows[0]!.channel_id;
      for (let i = 0; i < messageRows.length; i += MAX_ITEMS_PER_MESSAGE) {
        if (signal?.aborted) return messages; // claimed rows become due again when their claim expires
        const group = messageRows.slice(i, i + MAX_ITEMS_PER_MESSAGE);
        await this.#send(channelId, group, states.get(channelId)?.enabled ?? false, signal);
        messages++;
      }
    }
    return messages;
  }

  async #send(channelId: number, rows: OutboxRow[], enabled: boolean, signal: AbortSignal | undefined): Promise<void> {
    const ids = rows.map((r) => r.id);
    // The same rows make the same id on every try, so a receiver can drop a repeat whose answer was lost.
    const deliveryId = rows[0]!.delivery_id ?? deliveryIdOf(channelId, ids);
    const message: NotificationMessage = { delivery_id: deliveryId, items: rows.map((r) => r.payload as unknown as NotificationItem), test: false };
    const outcome: DeliveryOutcome = enabled
      ? await this.sender.deliver(channelId, message, signal)
      : { delivered: false, status_code: null, error: 'the channel is disabled', answer: null };
    const at = this.clock.now();
    const alertIds = [...new Set(rows.map((r) => r.alert_id).filter((id): id is number => id !== null))];
    if (outcome.delivered) {
      await markDelivered(this.db, ids, deliveryId, at);
      await setDeliveryError(this.db, alertIds, null);
      return;
    }
    const error = outcome.error ?? 'not delivered';
    const tries = Math.max(...rows.map((r) => r.attempts)) + 1;
    const giveUp = !enabled || tries >= MAX_TRIES;
    // The channel's status (last error, failing since) is recorded by the channel service on every try.
    await markFailed(this.db, ids, deliveryId, error, at, giveUp ? null : new Date(at.getTime() + retryDelayMs(tries)));
    if (giveUp) {
      await setDeliveryError(this.db, alertIds, `notification to channel ${channelId} failed after ${tries} tries: ${error}`);
      this.logger.warn({ channel_id: channelId, tries, reason: error, items: rows.length }, 'notification given up');
    } else {
      this.logger.warn({ channel_id: channelId, tries, reason: error, items: rows.length }, 'notification try failed; will retry');
    }
  }

  /** Runs a pass now instead of at the next poll (after alerts were queued). */
  wake(): void {
    this.#job.wake();
  }

  start(): void {
    this.#job.start();
  }

  async stop(): Promise<void> {
    await this.#job.stop();
    await this.#running?.catch(() => undefined);
  }
}

function deliveryIdOf(channelId: number, ids: readonly number[]): string {
  const hex = createHash('sha256').update(`${channelId}:${ids.join(',')}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
