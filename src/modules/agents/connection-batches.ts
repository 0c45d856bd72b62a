// What an agent socket costs the database, batched: the check before its upgrade (does the agent exist,
// which customer owns it) and its connected/disconnected events. One socket used to take three round
// trips of its own; in a storm of reconnects (784 opens and closes a second in issue 29) the writes to
// the pool's sockets alone took a quarter of the server's CPU and /healthz waited seconds. Batched with
// group commit, the sockets of one round trip share one statement of each kind, and the event loop stays
// free for everybody else.
import type { Kysely } from 'kysely';
import type { DbDialect } from '../../db/create-db.js';
import type { AgentEventType, Database } from '../../db/schema.js';
import { GroupCommit } from '../../platform/group-commit.js';
import { findAgentCustomers } from './agents.repo.js';
import { insertEvents } from './events.repo.js';

export interface ConnectionEvent {
  agent_id: string;
  type: Extract<AgentEventType, 'connected' | 'disconnected'>;
  created_at: Date;
}

/** An agent that exists, with its owning customer. */
export interface AgentOwner {
  customerId: number | null;
}

/**
 * How long a batch waits for company (see GroupCommit). Nobody waits for an event to be written, so
 * events gather everywhere; an upgrade waits for its lookup, which gathers only on the embedded
 * database, whose statements cost this very thread.
 */
const EVENTS_GATHER_MS = 20;
const PGLITE_LOOKUPS_GATHER_MS = 2;

export class ConnectionBatches {
  readonly #lookups: GroupCommit<string, AgentOwner | undefined>;
  readonly #events: GroupCommit<ConnectionEvent, void>;

  constructor(db: Kysely<Database>, dialect: DbDialect) {
    this.#lookups = new GroupCommit(async (ids: string[]) => {
      const owners = new Map((await findAgentCustomers(db, [...new Set(ids)])).map((r) => [r.id, r.customer_id]));
      return ids.map((id) => (owners.has(id) ? { customerId: owners.get(id) ?? null } : undefined));
    }, { maxBatch: 500, gatherMs: dialect === 'pglite' ? PGLITE_LOOKUPS_GATHER_MS : 0 });
    // One INSERT keeps the events of a batch in their order (ids are assigned in VALUES order).
    this.#events = new GroupCommit(async (events: ConnectionEvent[]) => {
      await insertEvents(db, events);
      return events.map(() => undefined);
    }, { maxBatch: 500, gatherMs: EVENTS_GATHER_MS });
  }

  /** The agent's owner, or undefined when no such agent exists. */
  ownerOf(agentId: string): Promise<AgentOwner | undefined> {
    return this.#lookups.submit(agentId);
  }

  record(event: ConnectionEvent): Promise<void> {
    return this.#events.submit(event);
  }
}
