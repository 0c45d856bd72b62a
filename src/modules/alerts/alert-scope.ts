// Whose an alert rule or a maintenance window is (issue 31), and who may see and change it. Both are
// global (no customer, no agent), of one customer (customer_id) or of one agent (agent_id; then they
// belong to the agent's customer, or to no customer while the agent is unassigned).
// A customer-scoped key sees its customer's objects and the global ones; global objects are read-only
// to it (403), because they act on every customer's agents. Anything else is "not found" (404), never a
// leak. The same rules serve rules and windows so the two resources never drift apart.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../platform/errors.js';
import { findAgentCustomers } from '../agents/agents.repo.js';
import { scopeAllows, scopeOf, type Caller } from '../auth/caller.js';
import { findCustomer } from '../customers/customers.repo.js';

export interface ScopeInput {
  customer_id?: number | null | undefined;
  agent_id?: string | null | undefined;
}

/** A stored object's scope and the customer it belongs to (its own, or its agent's). */
export interface Owned {
  customer_id: number | null;
  agent_id: string | null;
  owner_customer_id: number | null;
}

export interface ResolvedScope {
  customer_id: number | null;
  agent_id: string | null;
  /** The customer whose channels an object of this scope may use: its own or its agent's (null: global channels only). */
  owner_customer_id: number | null;
}

export const isGlobal = (o: Pick<Owned, 'customer_id' | 'agent_id'>): boolean => o.customer_id === null && o.agent_id === null;

/** Whether the caller may see the object (global ones: everybody). */
export function canSee(caller: Caller, o: Owned): boolean {
  const scope = scopeOf(caller);
  return isGlobal(o) || scopeAllows(scope, o.owner_customer_id);
}

/** 404 when the caller may not see it; 403 when it is global and the caller is customer-scoped. */
export function assertChangeable(caller: Caller, o: Owned, what: string): void {
  if (!canSee(caller, o)) throw new AppError('NOT_FOUND', `${what} not found`);
  if (isGlobal(o) && scopeOf(caller) !== null) {
    throw new AppError('FORBIDDEN', `A customer-scoped caller cannot change a global ${what.toLowerCase()} (one without customer_id and agent_id)`);
  }
}

/**
 * Checks the scope an object is to have: not both customer_id and agent_id (400); the customer exists
 * and, for a scoped caller, is its own (404); the agent exists and is visible (404); a scoped caller
 * cannot make a global one (403).
 */
export async function resolveScope(db: Kysely<Database>, caller: Caller, input: ScopeInput, what: string): Promise<ResolvedScope> {
  const customerId = input.customer_id ?? null;
  const agentId = input.agent_id ?? null;
  const scope = scopeOf(caller);
  if (customerId !== null && agentId !== null) {
    const message = 'give customer_id (one customer) or agent_id (one agent), not both';
    throw new AppError('VALIDATION_ERROR', `agent_id: ${message}`, { details: [{ path: 'agent_id', message }] });
  }
  if (agentId !== null) {
    const [agent] = await findAgentCustomers(db, [agentId]);
    if (!agent || !scopeAllows(scope, agent.customer_id)) throw new AppError('NOT_FOUND', 'Agent not found');
    return { customer_id: null, agent_id: agentId, owner_customer_id: agent.customer_id };
  }
  if (customerId !== null) {
    if (!scopeAllows(scope, customerId) || !(await findCustomer(db, customerId))) throw new AppError('NOT_FOUND', 'Customer not found');
    return { customer_id: customerId, agent_id: null, owner_customer_id: customerId };
  }
  if (scope !== null) {
    throw new AppError('FORBIDDEN', `A customer-scoped caller cannot create a global ${what.toLowerCase()}: give customer_id or agent_id`);
  }
  return { customer_id: null, agent_id: null, owner_customer_id: null };
}
