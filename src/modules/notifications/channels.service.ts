// Notification channels (issue 31): CRUD within the caller's customer scope, settings validated per
// type and checked before anything is stored (SSRF rules, the SMTP server's verify), secrets sealed
// and shown as hints, and delivery of one message to one channel through its type's adapter, one try
// at a time. Every try writes the channel's status (last attempt, last delivery, last error, failing
// since), so the outbox dispatcher and the test button leave the same trace.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ChannelType, Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Logger } from '../../platform/logger.js';
import { mapPage, type Page, type PageRequest } from '../../platform/paging.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { assertInScope, scopeOf, type Caller } from '../auth/caller.js';
import { findCustomer } from '../customers/customers.repo.js';
import type { LookupFn } from '../tasks/webhook-target.js';
import type { ChannelKind } from './channel-kind.js';
import { hintsOf, invalid, issuesOf, mergeSecrets, open, requireRebound, seal, type SecretsPatch } from './channel-secrets.js';
import { CHANNEL_KINDS } from './channel-types.js';
import * as repo from './channels.repo.js';
import { CHANNEL_TIMEOUT_MS, notDelivered, type SendContext } from './http-post.js';
import type { DeliveryOutcome, NotificationMessage } from './notification-message.js';
import { sampleItem } from './render.js';
import { logFailure } from '../../db/db-errors.js';

export interface ChannelServiceDeps {
  db: Kysely<Database>;
  box: SecretBox;
  clock: Clock;
  logger: Logger;
  /** WEBHOOK_ALLOW_LOOPBACK: loopback receivers allowed (local receivers and tests only). */
  allowLoopback: boolean;
  /** The settings' webhook_secret, for webhook channels without their own secret. */
  webhookSecret: () => Promise<string | null>;
  /** Limit per try (default 10 s). */
  timeoutMs?: number;
  /** Name resolution for the SSRF checks (tests); default: the system resolver. */
  lookup?: LookupFn;
}

/** A channel as the API shows it: everything but the sealed secrets (their hints are in secret_hints). */
export type Channel = Omit<repo.ChannelRow, 'sealed_secrets'>;

export interface NewChannelInput {
  type: ChannelType;
  name: string;
  customer_id?: number | null | undefined;
  enabled?: boolean | undefined;
  settings?: Record<string, unknown> | undefined;
  secrets?: SecretsPatch | undefined;
}

/** PUT: a full replacement of name, enabled and settings; secrets omitted keep their value, null clears. */
export interface ChannelUpdateInput {
  /** When given, it must be the channel's type (a channel never changes type). */
  type?: ChannelType | undefined;
  /** When given, it must be the channel's customer (rules of a customer may only use its channels). */
  customer_id?: number | null | undefined;
  name: string;
  /** Absent: stays as it is. */
  enabled?: boolean | undefined;
  settings?: Record<string, unknown> | undefined;
  secrets?: SecretsPatch | undefined;
}

export interface ChannelFilter {
  customerId?: number | undefined;
}

const withoutSealed = ({ sealed_secrets: _sealed, ...channel }: repo.ChannelRow): Channel => channel;

export class ChannelService {
  constructor(readonly deps: ChannelServiceDeps) {}

  list(caller: Caller, filter: ChannelFilter, page: PageRequest): Promise<Page<Channel>> {
    return repo.listChannels(this.deps.db, { scope: scopeOf(caller), customerId: filter.customerId }, page).then((p) => mapPage(p, withoutSealed));
  }

  async get(caller: Caller, id: number): Promise<Channel> {
    return withoutSealed(await this.#visible(caller, id));
  }

  /** Validates, checks (SSRF, SMTP verify when enabled) and stores; nothing is stored when any step refuses. */
  async create(caller: Caller, input: NewChannelInput): Promise<Channel> {
    const customerId = input.customer_id ?? null;
    if (customerId === null && scopeOf(caller) !== null) {
      throw new AppError('FORBIDDEN', 'A customer-scoped API key can only create channels of its own customer (give customer_id)');
    }
    if (customerId !== null) {
      assertInScope(caller, customerId, 'Customer');
      if (!(await findCustomer(this.deps.db, customerId))) throw new AppError('NOT_FOUND', 'Customer not found');
    }
    const kind = CHANNEL_KINDS[input.type];
    const enabled = input.enabled ?? true;
    const settings = parseSettings(kind, input.settings);
    const secrets = mergeSecrets(kind, {}, input.secrets);
    await kind.check(settings, secrets, this.#context(), { enabled });
    const id = await repo.insertChannel(this.deps.db, {
      type: input.type,
      customer_id: customerId,
      name: input.name,
      enabled,
      settings,
      sealed_secrets: seal(this.deps.box, secrets),
      secret_hints: hintsOf(kind, secrets),
      created_at: this.deps.clock.now(),
    });
    return this.get(caller, id);
  }

  async update(caller: Caller, id: number, input: ChannelUpdateInput): Promise<Channel> {
    const existing = await this.#visible(caller, id);
    if (input.type !== undefined && input.type !== existing.type) {
      throw invalid([{ path: 'type', message: `is ${existing.type}; a channel cannot change its type (create a new one)` }]);
    }
    if (input.customer_id !== undefined && input.customer_id !== existing.customer_id) {
      throw invalid([{ path: 'customer_id', message: `is ${existing.customer_id ?? 'null (global)'}; a channel cannot move to another customer (create a new one)` }]);
    }
    const kind = CHANNEL_KINDS[existing.type];
    const enabled = input.enabled ?? existing.enabled;
    const settings = parseSettings(kind, input.settings);
    const stored = this.#storedSecrets(existing);
    requireRebound(kind, existing.settings, settings, stored, input.secrets);
    const secrets = mergeSecrets(kind, stored, input.secrets);
    await kind.check(settings, secrets, this.#context(), { enabled });
    const values = { name: input.name, enabled, settings, sealed_secrets: seal(this.deps.box, secrets), secret_hints: hintsOf(kind, secrets) };
    if (!(await repo.updateChannel(this.deps.db, id, { ...values, updated_at: this.deps.clock.now() }))) throw notFound();
    return this.get(caller, id);
  }

  /** Deletes the channel; its undelivered notifications and its place in rules go with it. */
  async delete(caller: Caller, id: number): Promise<void> {
    await this.#visible(caller, id);
    if (!(await repo.deleteChannel(this.deps.db, id))) throw notFound();
  }

  /**
   * Sends a test message (test: true, one sample item) now, also to a disabled channel, so a channel
   * can be tried before it is switched on. The outcome is the answer; it is recorded in the status too.
   */
  async test(caller: Caller, id: number, signal?: AbortSignal): Promise<DeliveryOutcome> {
    const channel = await this.#visible(caller, id);
    const customer = channel.customer_id === null ? undefined : await findCustomer(this.deps.db, channel.customer_id);
    const now = this.deps.clock.now();
    const item = sampleItem(customer ? { id: customer.id, number: customer.number, name: customer.name } : null, now);
    return this.#send(channel, { delivery_id: randomUUID(), test: true, items: [item] }, signal);
  }

  /** Sends one message to one channel: one try, never throws; the outcome says what the receiver answered. */
  async deliver(channelId: number, message: NotificationMessage, signal?: AbortSignal): Promise<DeliveryOutcome> {
    try {
      const channel = await repo.findChannel(this.deps.db, channelId);
      if (!channel) return notDelivered(`notification channel ${channelId} does not exist (deleted)`);
      if (!channel.enabled) return notDelivered(`notification channel ${channelId} is disabled`);
      return await this.#send(channel, message, signal);
    } catch (err) {
      logFailure(this.deps.logger, err, { channel_id: channelId }, 'notification delivery failed');
      return notDelivered('the notification could not be sent (internal error)');
    }
  }

  async #send(channel: repo.ChannelRow, message: NotificationMessage, signal: AbortSignal | undefined): Promise<DeliveryOutcome> {
    let outcome: DeliveryOutcome;
    try {
      const secrets = open(this.deps.box, channel.sealed_secrets);
      outcome = await CHANNEL_KINDS[channel.type].send(message, channel.settings, secrets, this.#context(signal));
    } catch (err) {
      // Only opening the secrets can throw here (the adapters never do).
      this.deps.logger.error({ err, channel_id: channel.id }, 'notification channel secrets could not be opened');
      outcome = notDelivered("the channel's secrets could not be read (was ENCRYPTION_KEY changed?); enter them again");
    }
    try {
      await repo.recordAttempt(this.deps.db, channel.id, this.deps.clock.now(), outcome.delivered ? null : outcome.error);
    } catch (err) {
      logFailure(this.deps.logger, err, { channel_id: channel.id }, 'could not record the delivery status of a notification channel');
    }
    return outcome;
  }

  #context(signal?: AbortSignal): SendContext {
    const { allowLoopback, logger, lookup, webhookSecret } = this.deps;
    return { allowLoopback, logger, lookup, signal, webhookSecret, timeoutMs: this.deps.timeoutMs ?? CHANNEL_TIMEOUT_MS };
  }

  /** The stored secrets; unreadable ones (another ENCRYPTION_KEY) count as none, so they can be entered again. */
  #storedSecrets(channel: repo.ChannelRow): Record<string, string> {
    try {
      return open(this.deps.box, channel.sealed_secrets);
    } catch (err) {
      this.deps.logger.warn({ err, channel_id: channel.id }, 'notification channel secrets could not be opened; treating them as unset');
      return {};
    }
  }

  /** The channel when the caller may see it: 404 for another customer's, and for global ones to a scoped key. */
  async #visible(caller: Caller, id: number): Promise<repo.ChannelRow> {
    const channel = await repo.findChannel(this.deps.db, id);
    if (!channel) throw notFound();
    assertInScope(caller, channel.customer_id, 'Notification channel');
    return channel;
  }
}

const notFound = () => new AppError('NOT_FOUND', 'Notification channel not found');

function parseSettings(kind: ChannelKind, raw: Record<string, unknown> | undefined): Record<string, unknown> {
  const parsed = kind.settings.safeParse(raw ?? {});
  if (!parsed.success) throw invalid(issuesOf('settings', parsed.error));
  return parsed.data;
}
