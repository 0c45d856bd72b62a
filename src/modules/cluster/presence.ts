// Which agents are connected anywhere in the cluster, readable at once by every instance (`connected`
// in agent lists, the checks before a command or task). This instance's own sockets are written to
// agent_presence in batches (group commit: a reconnect storm is a few statements, not one per socket)
// and announced on the bus; the agents held elsewhere come from those announcements and, every few
// seconds, from the table (an announcement lost while the bus was away is corrected there). A write
// that failed (the database was away) is tried again on that same tick, unless a newer change of the
// agent replaced it: a row left behind would list a gone agent as connected here.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { GroupCommit } from '../../platform/group-commit.js';
import type { Logger } from '../../platform/logger.js';
import type { ClusterBus } from './cluster-bus.js';
import { applyPresence, remotePresence, type PresenceChange } from './presence.repo.js';

export const PRESENCE_SUBJECT = 'rmm.presence';
/** An instance whose row is older than this is dead: its agents are not counted as connected. */
export const INSTANCE_DEAD_AFTER_MS = 15_000;
const REFRESH_MS = 5_000;

interface Announcement {
  instance: string;
  agent: string;
  up: boolean;
}

interface Remote {
  instance: string;
  /** When an announcement last set this entry (ms): a refresh read before it does not undo it. */
  announcedAt: number;
}

export class ClusterPresence {
  readonly #writes: GroupCommit<PresenceChange, void>;
  readonly #remote = new Map<string, Remote>();
  /** Agents announced gone, with when: a refresh read before that does not bring them back. */
  readonly #goneAt = new Map<string, number>();
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Each agent's newest change not yet in the table, and those whose write failed (retried on the tick). */
  readonly #pending = new Map<string, PresenceChange>();
  readonly #failed = new Map<string, PresenceChange>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly bus: ClusterBus,
    private readonly instanceId: string,
    private readonly logger: Logger,
  ) {
    this.#writes = new GroupCommit(async (changes: PresenceChange[]) => {
      try {
        await applyPresence(db, instanceId, changes);
      } catch (err) {
        // One line per failed batch, not per agent: an outage with thousands of sockets stays readable.
        this.logger.warn({ err, agents: changes.length }, 'could not record where agents are connected; trying again in a few seconds');
        throw err;
      }
      return changes.map(() => undefined);
    }, { maxBatch: 1000 });
  }

  start(): void {
    this.bus.subscribe(PRESENCE_SUBJECT, (body) => this.#announced(body as Announcement));
    this.#timer = setInterval(() => {
      this.#retryFailed();
      void this.refresh();
    }, REFRESH_MS);
    void this.refresh();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /**
   * This instance took over (`up`) or let go of an agent's socket: the others hear it at once; the
   * table is written once `before` settles. A closed socket's row goes only after its `disconnected`
   * event is written: should this instance die in between, the reaper still finds the row and writes
   * the event (and finding the event already written, does not write it twice).
   */
  local(agentId: string, up: boolean, at: Date, before: Promise<unknown> = Promise.resolve()): Promise<void> {
    this.bus.publish(PRESENCE_SUBJECT, { instance: this.instanceId, agent: agentId, up } satisfies Announcement);
    const change = { agentId, up, at };
    this.#pending.set(agentId, change);
    this.#failed.delete(agentId);
    // `before` failing (an event not written) is its owner's to report; the presence is written anyway.
    return before.catch(() => undefined).then(() => this.#write(change));
  }

  #write(change: PresenceChange): Promise<void> {
    return this.#writes.submit(change).then(
      () => {
        if (this.#pending.get(change.agentId) === change) this.#pending.delete(change.agentId);
      },
      () => {
        if (this.#pending.get(change.agentId) === change) this.#failed.set(change.agentId, change);
      },
    );
  }

  #retryFailed(): void {
    const retry = [...this.#failed.values()];
    this.#failed.clear();
    for (const change of retry) void this.#write(change);
  }

  /** The other instance holding the agent's socket, if any. */
  holderOf(agentId: string): string | undefined {
    return this.#remote.get(agentId)?.instance;
  }

  /** Resolves when another instance announces the agent, or false after `ms` (or on `signal`). */
  waitForRemote(agentId: string, ms: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(agentId) ?? new Set();
      const done = (value: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        waiters.delete(wake);
        if (waiters.size === 0) this.#waiters.delete(agentId);
        resolve(value);
      };
      const wake = () => done(true);
      const abort = () => done(false);
      const timer = setTimeout(abort, ms);
      signal?.addEventListener('abort', abort, { once: true });
      this.#waiters.set(agentId, waiters.add(wake));
    });
  }

  /** Reads the agents held by live instances from the table. */
  async refresh(): Promise<void> {
    const readAt = Date.now();
    let rows: Array<{ agent_id: string; instance_id: string }>;
    try {
      rows = await remotePresence(this.db, this.instanceId, INSTANCE_DEAD_AFTER_MS);
    } catch (err) {
      this.logger.warn({ err }, 'could not read where agents are connected');
      return;
    }
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.agent_id);
      if ((this.#goneAt.get(row.agent_id) ?? 0) > readAt) continue;
      const known = this.#remote.get(row.agent_id);
      if (!known || known.announcedAt < readAt) this.#remote.set(row.agent_id, { instance: row.instance_id, announcedAt: known?.announcedAt ?? 0 });
      // Its announcement was lost (the bus was away): whoever waits for it hears it from the table.
      if (!known) this.#wakeWaiters(row.agent_id);
    }
    for (const [agentId, remote] of this.#remote) if (!seen.has(agentId) && remote.announcedAt < readAt) this.#remote.delete(agentId);
    for (const [agentId, at] of this.#goneAt) if (at < readAt) this.#goneAt.delete(agentId);
  }

  #announced(a: Announcement): void {
    if (a.instance === this.instanceId || typeof a.agent !== 'string') return;
    if (a.up) {
      this.#remote.set(a.agent, { instance: a.instance, announcedAt: Date.now() });
      this.#goneAt.delete(a.agent);
      this.#wakeWaiters(a.agent);
    } else if (this.#remote.get(a.agent)?.instance === a.instance) {
      this.#remote.delete(a.agent);
      this.#goneAt.set(a.agent, Date.now());
    }
  }

  #wakeWaiters(agentId: string): void {
    for (const wake of [...(this.#waiters.get(agentId) ?? [])]) wake();
  }
}
