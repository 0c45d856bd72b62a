// Keeps each agent connected here running its effective set of checks: computes the sets (policies,
// overrides, the agent's customer, tags and platform) and sends an agent `checks_set` whenever its set's
// version differs from the one it last acknowledged on this socket. Runs for one agent when its socket
// announces the capability, and for every agent held here when the checks' revision moved (a policy or
// an override changed, on any instance) or an agent changed. Sets go out a few at a time and the work
// yields between batches, so a policy change reaching 10,000 agents does not hold heartbeats up.
import { setImmediate as yieldToIo } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import { CHECK_CAPABILITY, MAX_CHECKS_PER_AGENT } from './check-protocol.js';
import { agentChecksOf, effectiveChecks, setVersion, type AgentForChecks, type EffectiveCheck, type PolicyForAgents } from './effective-checks.js';
import { currentRevision, overridesOf, policiesForAgents } from './policies.repo.js';
import { ScriptResolver } from './script-resolver.js';

const BATCH = 500;
const SENDS_IN_FLIGHT = 32;
const SET_TIMEOUT_MS = 30_000;
/** A set an agent did not take (timed out, refused) is offered again after this long. */
const RETRY_AFTER_MS = 60_000;
/**
 * Every agent held here is compared with its computed set this often even when nothing announced a
 * change: what no revision covers (a library script's new text, a write lost to a database hiccup)
 * still reaches agents. Agents whose version matches are not sent anything.
 */
const FULL_SYNC_EVERY_MS = 10 * 60_000;

interface Pushed {
  version: string;
  checkIds: ReadonlySet<string>;
}

export class CheckSets {
  /** What each agent held here acknowledged on its current socket. */
  readonly #pushed = new Map<string, Pushed>();
  /** Sets on their way to agents: an agent's results for one can arrive in the same read as its answer. */
  readonly #sending = new Map<string, Pushed>();
  readonly #waiters = new Map<string, Array<(pushed: Pushed | null) => void>>();
  /** Agents that did not take their last set, and when that was noticed. */
  readonly #failed = new Map<string, number>();
  #revision: string | null = null;
  #lastFullSync: number;
  #running: Promise<void> = Promise.resolve();
  #fullPending = false;
  #stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly hub: AgentHub,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {
    this.#lastFullSync = clock.now().getTime();
  }

  /** Agents connected here that hold the set this instance gave them. */
  holding(): number {
    return this.#pushed.size;
  }

  /** The set a results frame of `version` belongs to: the one on its way with that version, else the acknowledged one. */
  forResults(agentId: string, version: string): Pushed | null {
    const sending = this.#sending.get(agentId);
    return sending?.version === version ? sending : (this.#pushed.get(agentId) ?? null);
  }

  /** The checks the agent was given on its current socket, or null when it has none from this instance. */
  given(agentId: string): Pushed | null {
    return this.#pushed.get(agentId) ?? null;
  }

  /**
   * The checks the agent will have been given once the set under way reaches it (results can arrive
   * before: an agent sends what it ran while disconnected as soon as its socket is back); null when
   * none comes within the set's timeout.
   */
  whenGiven(agentId: string): Promise<Pushed | null> {
    if (!this.#supports(agentId)) return Promise.resolve(null);
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(null), SET_TIMEOUT_MS + 5000);
      const settle = (pushed: Pushed | null) => {
        clearTimeout(timer);
        this.#waiters.set(agentId, (this.#waiters.get(agentId) ?? []).filter((w) => w !== settle));
        resolve(pushed);
      };
      this.#waiters.set(agentId, [...(this.#waiters.get(agentId) ?? []), settle]);
    });
  }

  /** The agent's socket announced its capabilities: a new socket starts from nothing. */
  connected(agentId: string, capabilities: readonly string[]): void {
    this.#pushed.delete(agentId);
    if (capabilities.includes(CHECK_CAPABILITY)) this.#enqueue(() => this.#sync([agentId]));
  }

  disconnected(agentId: string): void {
    this.#pushed.delete(agentId);
    this.#failed.delete(agentId);
    this.#sending.delete(agentId);
    for (const waiter of this.#waiters.get(agentId) ?? []) waiter(null);
  }

  /** Sync one agent now (its customer or tags changed); false when its socket is not here. */
  agentChanged(agentId: string): boolean {
    if (!this.hub.isConnected(agentId)) return false;
    if (this.#supports(agentId)) this.#enqueue(() => this.#sync([agentId]));
    return true;
  }

  /**
   * Every agent held here, when the revision moved since the last look, when the periodic full sync is
   * due, or with `force`; otherwise only the agents whose last set failed a minute or more ago.
   */
  async poll(force = false): Promise<void> {
    const now = this.clock.now().getTime();
    const revision = await currentRevision(this.db);
    const due = now - this.#lastFullSync >= FULL_SYNC_EVERY_MS;
    if (!force && !due && revision === this.#revision) return this.#retryFailed(now);
    this.#revision = revision;
    this.#lastFullSync = now;
    if (this.#fullPending) return;
    this.#fullPending = true;
    this.#enqueue(async () => {
      this.#fullPending = false;
      await this.#sync(this.hub.connectedIds().filter((id) => this.#supports(id)));
    });
    await this.#running;
  }

  /** Agents waiting to be offered their set again (tests and the status route). */
  failing(): number {
    return this.#failed.size;
  }

  async #retryFailed(now: number): Promise<void> {
    const due = [...this.#failed].filter(([, at]) => now - at >= RETRY_AFTER_MS).map(([id]) => id);
    if (due.length === 0) return;
    for (const id of due) this.#failed.delete(id);
    const held = due.filter((id) => this.hub.isConnected(id) && this.#supports(id));
    this.#enqueue(() => this.#sync(held));
    await this.#running;
  }

  /** poll() for a caller that does not wait: a failure is logged (the periodic poll tries again), never left unhandled. */
  pollSoon(): void {
    this.poll().catch((err: unknown) => this.logger.warn({ err }, 'could not look at the checks revision; the next poll will'));
  }

  /** Waits for the work under way; nothing new starts. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running;
  }

  /** The effective set of one agent as the server computes it now (for the API). */
  async effectiveOf(agent: AgentForChecks): Promise<{ version: string; checks: EffectiveCheck[] }> {
    const computed = await this.#compute([agent]);
    return computed.get(agent.id)!;
  }

  #supports(agentId: string): boolean {
    return this.hub.capabilities(agentId)?.includes(CHECK_CAPABILITY as never) ?? false;
  }

  #enqueue(work: () => Promise<void>): void {
    if (this.#stopped) return;
    this.#running = this.#running.then(work).catch((err: unknown) => this.logger.warn({ err }, 'could not bring agents their sets of checks'));
  }

  async #sync(agentIds: readonly string[]): Promise<void> {
    for (let i = 0; i < agentIds.length && !this.#stopped; i += BATCH) {
      const sets = await this.#compute(await agentsOf(this.db, agentIds.slice(i, i + BATCH)));
      const sends: Array<Promise<void>> = [];
      for (const [agentId, set] of sets) {
        if (this.#pushed.get(agentId)?.version === set.version) continue;
        sends.push(this.#send(agentId, set.version, set.checks));
        if (sends.length >= SENDS_IN_FLIGHT) await Promise.all(sends.splice(0));
      }
      await Promise.all(sends);
      await yieldToIo();
    }
  }

  async #send(agentId: string, version: string, checks: EffectiveCheck[]): Promise<void> {
    if (!this.hub.isConnected(agentId)) return;
    const given = agentChecksOf(checks).slice(0, MAX_CHECKS_PER_AGENT);
    const pushed = { version, checkIds: new Set(given.map((c) => c.id)) };
    this.#sending.set(agentId, pushed);
    try {
      await this.hub.request(agentId, 'checks_set', { version, checks: given }, SET_TIMEOUT_MS);
      this.#pushed.set(agentId, pushed);
      this.#failed.delete(agentId);
      for (const waiter of this.#waiters.get(agentId) ?? []) waiter(pushed);
      // States of checks the agent no longer runs would show as failing for ever.
      let stale = this.db.deleteFrom('check_states').where('agent_id', '=', agentId);
      if (given.length > 0) stale = stale.where('check_id', 'not in', [...pushed.checkIds]);
      await stale.execute();
    } catch (err) {
      // Offered again by a later poll, unless its socket goes (a new socket gets its set anyway).
      if (this.hub.isConnected(agentId)) this.#failed.set(agentId, this.clock.now().getTime());
      this.logger.warn({ err, agentId }, 'an agent did not take its set of checks; it is offered again in a minute');
    } finally {
      if (this.#sending.get(agentId) === pushed) this.#sending.delete(agentId);
    }
  }

  async #compute(agents: readonly AgentForChecks[]): Promise<Map<string, { version: string; checks: EffectiveCheck[] }>> {
    const policies: PolicyForAgents[] = await policiesForAgents(this.db);
    const overrides = await overridesOf(this.db, agents.map((a) => a.id));
    const scripts = await ScriptResolver.load(this.db, policies);
    const out = new Map<string, { version: string; checks: EffectiveCheck[] }>();
    for (const agent of agents) {
      const checks = effectiveChecks(policies, agent, overrides.get(agent.id) ?? new Map(), (params) => scripts.resolve(params));
      out.set(agent.id, { version: setVersion(agentChecksOf(checks)), checks });
    }
    return out;
  }
}

async function agentsOf(db: Kysely<Database>, ids: readonly string[]): Promise<AgentForChecks[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('agents').select(['id', 'customer_id', 'tag_keys', 'platform']).where('id', 'in', ids).execute();
  return rows.map((r) => ({ id: r.id, customerId: r.customer_id, tagKeys: r.tag_keys, platform: r.platform }));
}
