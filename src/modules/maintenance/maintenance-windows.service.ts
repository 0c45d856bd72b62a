// SKELETON (issue 31, being built): maintenance windows — CRUD, and whether one covers an agent at a time.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';

export class MaintenanceWindowService {
  constructor(
    readonly db: Kysely<Database>,
    readonly clock: Clock,
  ) {}

  /** The window (agent's own, its customer's, or global) that covers `at` for this agent, or null. */
  async activeWindow(agent: { id: string; customer_id: number | null }, at: Date): Promise<{ id: number; name: string } | null> {
    void agent;
    void at;
    return null;
  }
}
