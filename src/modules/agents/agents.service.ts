// Agents (contract §2): pre-registration, registration (agent keys only; matched by agent id, then by
// pre-registered name, never by hostname), reads with computed status, customer assignment and
// deletion. A customer-scoped caller sees only its customer's agents; the rest are "not found".
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/db-errors.js';
import type { Database, Platform } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { assertInScope, defaultCustomerOf, scopeAllows, scopeOf, type Caller } from '../auth/caller.js';
import { findCustomer } from '../customers/customers.repo.js';
import { listFirmware } from '../firmware/firmware.repo.js';
import { compareVersions } from '../firmware/versions.js';
import * as repo from './agents.repo.js';
import type { ConnectionBatches } from './connection-batches.js';
import { listEvents, type EventFilter } from './events.repo.js';

export type Agent = repo.AgentRow;

/** Which agents have their WebSocket open; the agent hub provides it. */
export interface AgentConnections {
  isConnected(agentId: string): boolean;
  /** Closes the agent's live socket, if any (the agent was deleted). */
  disconnect(agentId: string): void;
}

export interface Registration {
  agent_id?: string | undefined;
  name?: string | undefined;
  hostname: string;
  platform: Platform;
  agent_version?: string | undefined;
}

type RegistrationDetails = { hostname: string; platform: Platform; agent_version: string | undefined };

/** What POST /agent/register answers, and, when the agent joined the key's customer by it, which one. */
export interface RegistrationOutcome {
  agent_id: string;
  name: string;
  pre_registered: boolean;
  joined?: { id: number; number: string; name: string };
}

/** Until the agent hub is running, no agent counts as connected. */
export const noConnections: AgentConnections = { isConnected: () => false, disconnect: () => undefined };

const notFound = () => new AppError('NOT_FOUND', 'Agent not found');

export function newAgentId(): string {
  return randomBytes(16).toString('hex');
}

export class AgentService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    readonly connections: AgentConnections,
    /** The database work of agent sockets, batched. */
    private readonly sockets: ConnectionBatches,
    /** Told when an agent's customer, tags or platform may have changed (the checks feature recomputes its set). */
    private readonly changed: (agentId: string) => void = () => undefined,
  ) {}

  now(): Date {
    return this.clock.now();
  }

  /** One page of the agents the caller may see, in the given order. */
  list(caller: Caller, filter: Omit<repo.AgentFilter, 'scope' | 'now'>, order: repo.AgentOrder, page: PageRequest): Promise<Page<Agent>> {
    return repo.listAgents(this.db, { ...filter, scope: scopeOf(caller), now: this.clock.now() }, order, page);
  }

  async listOfCustomer(caller: Caller, customerId: number, order: repo.AgentOrder, page: PageRequest): Promise<Page<Agent>> {
    await this.requireCustomer(caller, customerId);
    return this.list(caller, { customerId }, order, page);
  }

  async get(caller: Caller, id: string): Promise<Agent> {
    const agent = await repo.findAgent(this.db, id);
    if (!agent || !inScope(caller, agent.customer_id)) throw notFound();
    return agent;
  }

  /** The agents of these ids the caller may see (others are left out). */
  async findMany(caller: Caller, ids: readonly string[]): Promise<Agent[]> {
    return (await repo.findAgents(this.db, ids)).filter((agent) => inScope(caller, agent.customer_id));
  }

  /** The heartbeat text exactly as the agent sent it, or null before the first heartbeat. */
  async systemText(caller: Caller, id: string): Promise<string | null> {
    const row = await repo.findSystemText(this.db, id);
    if (!row || !inScope(caller, row.customer_id)) throw notFound();
    return row.system;
  }

  async preRegister(caller: Caller, input: { name: string; customer_id?: number | null | undefined }): Promise<Agent> {
    const customerId = input.customer_id ?? defaultCustomerOf(caller);
    if (customerId !== null) await this.requireCustomer(caller, customerId);
    try {
      return await repo.insertAgent(this.db, {
        id: newAgentId(),
        name: input.name,
        hostname: repo.PENDING_HOSTNAME,
        customer_id: customerId,
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('CONFLICT', `A pre-registered agent named ${input.name} already exists`);
      throw err;
    }
  }

  /**
   * Registration is the agent's act (issue 57): only an agent key registers (the route declares it, and
   * this says it again for any other caller). A key of one customer never rewrites an agent of another
   * (404, as if it did not exist); an agent without a customer that registers with a customer's key
   * joins that customer, and `joined` says so, for the audit log.
   */
  async register(caller: Caller, input: Registration): Promise<RegistrationOutcome> {
    if (caller.kind !== 'api_key' || caller.permission !== 'agent') throw new AppError('FORBIDDEN', 'Only an agent key (permission agent) may register an agent');
    try {
      return await this.registerOnce(caller, input);
    } catch (err) {
      // Two first registrations of one new agent at once: the loser finds the winner's row next time.
      if (isUniqueViolation(err)) return this.registerOnce(caller, input);
      throw err;
    }
  }

  /**
   * The two common registrations, an agent registering again under its id and a new agent, take two
   * statements and no transaction; the rest (claiming a pre-registered agent, an unassigned agent joining
   * a customer) the transaction below. Five statements per registration were too many for the embedded
   * database, which runs each on the server's own thread: 10,000 agents starting over a minute timed
   * out there.
   */
  private async registerOnce(caller: Caller, input: Registration): Promise<RegistrationOutcome> {
    const scope = scopeOf(caller);
    const details = { hostname: input.hostname, platform: input.platform, agent_version: input.agent_version };
    const { existing, pending } = await repo.findRegistrationMatches(this.db, input.agent_id, input.name ?? input.hostname, scope);
    if (existing && (existing.customer_id !== null || scope === null)) {
      if (!inScope(caller, existing.customer_id)) throw notFound();
      // Only while it is still within the scope: deleted or moved in between, the full path decides again.
      const row = await repo.updateRegistration(this.db, existing.id, details, scope);
      if (row) return { agent_id: row.id, name: row.name, pre_registered: false };
    } else if (!existing && !pending) {
      // A first registration racing another of the same id loses on the key: register() retries.
      const row = await repo.insertAgent(this.db, this.newAgentValues(caller, input, details));
      return { agent_id: row.id, name: row.name, pre_registered: false };
    }
    return this.registerInTransaction(caller, input, details);
  }

  private newAgentValues(caller: Caller, input: Registration, details: { hostname: string; platform: Platform }) {
    return { id: input.agent_id ?? newAgentId(), name: input.name ?? input.hostname, customer_id: defaultCustomerOf(caller), ...details, agent_version: input.agent_version ?? null };
  }

  private registerInTransaction(caller: Caller, input: Registration, details: RegistrationDetails): Promise<RegistrationOutcome> {
    const scope = scopeOf(caller);
    return this.db.transaction().execute(async (trx) => {
      if (input.agent_id) {
        // Locked: an operator assigning it a customer meanwhile waits, and is not overwritten.
        const existing = await repo.lockAgent(trx, input.agent_id);
        if (existing) {
          if (existing.customer_id === null && scope !== null) return this.join(trx, caller, existing.id, details);
          // Another customer's agent cannot be taken over, and its existence is not revealed (contract §0).
          if (!inScope(caller, existing.customer_id)) throw notFound();
          const row = await repo.updateRegistration(trx, existing.id, details);
          if (!row) throw notFound();
          return { agent_id: row.id, name: row.name, pre_registered: false };
        }
      }
      const pending = await repo.findPendingByName(trx, input.name ?? input.hostname, scope);
      if (pending) {
        const row = await repo.updateRegistration(trx, pending.id, details);
        if (!row) throw notFound();
        return { agent_id: row.id, name: row.name, pre_registered: true };
      }
      const row = await repo.insertAgent(trx, this.newAgentValues(caller, input, details));
      return { agent_id: row.id, name: row.name, pre_registered: false };
    });
  }

  /** An agent without a customer registering with a customer's agent key: it joins that customer. */
  private async join(trx: Kysely<Database>, caller: Caller, agentId: string, details: RegistrationDetails): Promise<RegistrationOutcome> {
    const customer = await findCustomer(trx, defaultCustomerOf(caller)!);
    // The key's customer was deleted a moment ago (its keys go with it): the key no longer counts.
    if (!customer) throw new AppError('UNAUTHORIZED', 'Invalid API key', { headers: { 'www-authenticate': 'Bearer realm="rmm"' } });
    await repo.setAgentCustomer(trx, agentId, customer.id);
    const row = await repo.updateRegistration(trx, agentId, details);
    if (!row) throw notFound();
    return { agent_id: row.id, name: row.name, pre_registered: false, joined: { id: customer.id, number: customer.number, name: customer.name } };
  }

  /** Sets the agent's tags and/or note (contract-free addition of issue 33); scope as every agent change. */
  async annotate(caller: Caller, id: string, values: { tags?: string[] | undefined; note?: string | undefined }): Promise<Agent> {
    await this.get(caller, id);
    const row = await repo.annotateAgent(this.db, id, values);
    if (!row) throw notFound();
    this.changed(id);
    return row;
  }

  /** The tags in use among the agents the caller may see. */
  tags(caller: Caller) {
    return repo.listTags(this.db, scopeOf(caller));
  }

  /**
   * The newest firmware version of each platform (numeric-aware, as GET /firmware/latest picks it): an
   * agent running an older one is flagged in the list. Read per request; the table has a few rows.
   */
  async latestVersions(): Promise<ReadonlyMap<Platform, string>> {
    const latest = new Map<Platform, string>();
    for (const f of await listFirmware(this.db)) {
      const platform = f.platform as Platform;
      const current = latest.get(platform);
      if (current === undefined || compareVersions(f.version, current) > 0) latest.set(platform, f.version);
    }
    return latest;
  }

  async setCustomer(caller: Caller, id: string, customerId: number | null): Promise<Agent> {
    await this.get(caller, id);
    if (customerId !== null) await this.requireCustomer(caller, customerId);
    const row = await repo.setAgentCustomer(this.db, id, customerId);
    if (!row) throw notFound();
    this.changed(id);
    return row;
  }

  /** Events newest first, of one agent (which must be visible) or of every visible agent. */
  async events(caller: Caller, filter: Omit<EventFilter, 'scope'>, page: PageRequest) {
    if (filter.agentId !== undefined) await this.get(caller, filter.agentId);
    return listEvents(this.db, { ...filter, scope: scopeOf(caller) }, page);
  }

  /**
   * Whether the caller may hold this agent's WebSocket (contract §5): unknown agent → 404, an agent of
   * another customer than the key's scope → 403.
   */
  async assertMayConnect(caller: Caller, id: string): Promise<void> {
    const agent = await this.sockets.ownerOf(id);
    if (!agent) throw notFound();
    if (!inScope(caller, agent.customerId)) throw new AppError('FORBIDDEN', 'This key may not connect as an agent of another customer');
  }

  /** The items whose agent the caller may see (a scoped key: its customer's agents only). */
  async filterToScope<T extends { agent_id: string }>(caller: Caller, items: T[]): Promise<T[]> {
    const scope = scopeOf(caller);
    if (scope === null || items.length === 0) return items;
    const visible = new Set(await repo.agentIdsInScope(this.db, scope, items.map((i) => i.agent_id)));
    return items.filter((i) => visible.has(i.agent_id));
  }

  /** Records a WebSocket connect or disconnect. */
  recordConnection(agentId: string, type: 'connected' | 'disconnected', at: Date): Promise<void> {
    return this.sockets.record({ agent_id: agentId, type, created_at: at });
  }

  async delete(caller: Caller, id: string): Promise<void> {
    await this.get(caller, id);
    await repo.deleteAgent(this.db, id);
    this.connections.disconnect(id);
  }

  private async requireCustomer(caller: Caller, customerId: number): Promise<void> {
    assertInScope(caller, customerId, 'Customer');
    if (!(await findCustomer(this.db, customerId))) throw new AppError('NOT_FOUND', 'Customer not found');
  }
}

function inScope(caller: Caller, customerId: number | null): boolean {
  return scopeAllows(scopeOf(caller), customerId);
}
