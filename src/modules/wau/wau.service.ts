// Per-customer winget-autoupdate rules (spec section 4, contract §3): allow rules make the customer's
// `included` list, block rules its `excluded` list, in the plain-text format winget-autoupdate reads
// from a URL; and the software inventory of the customer's Windows agents, aggregated. Access is the
// customer's: a customer outside the caller's scope is "not found".
import type { Kysely } from 'kysely';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/db-errors.js';
import type { Database, WauAction } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { assertInScope, type Caller } from '../auth/caller.js';
import * as customers from '../customers/customers.repo.js';
import { compareVersions } from '../firmware/versions.js';
import * as inventory from './inventory.repo.js';
import { holdMs, isNotModified, listValidators, type ListConditions, type ListValidators } from './list-validators.js';
import * as repo from './wau.repo.js';

export type { WauRuleRow } from './wau.repo.js';

export interface InventoryProduct {
  name: string;
  publisher: string;
  agent_count: number;
  versions: Array<{ version: string; agent_count: number }>;
}

/** A list for the on-device updater; `body` is null when the caller's copy is current (304). */
export interface PackageList extends ListValidators {
  body: string | null;
}

/** Times an answer waits for the second of a change to end before it is sent with Last-Modified capped at Date. */
const MAX_HOLDS = 3;

export class WauService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async listRules(caller: Caller, customerId: number, page: PageRequest): Promise<Page<repo.WauRuleRow>> {
    await this.customer(caller, customerId);
    return repo.listRules(this.db, customerId, page);
  }

  async createRule(
    caller: Caller,
    customerId: number,
    input: { action: WauAction; package_id: string; display_name?: string | undefined },
  ): Promise<repo.WauRuleRow> {
    await this.customer(caller, customerId);
    const now = this.clock.now();
    const values = {
      customer_id: customerId,
      action: input.action,
      package_id: input.package_id,
      display_name: input.display_name || input.package_id,
      created_at: now,
    };
    try {
      return await this.db.transaction().execute(async (trx) => {
        const rule = await repo.insertRule(trx, values);
        await repo.recordListChange(trx, customerId, this.clock.now());
        return rule;
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('CONFLICT', `The customer already has a rule for ${input.package_id}`);
      if (isForeignKeyViolation(err)) throw new AppError('NOT_FOUND', 'Customer not found'); // deleted meanwhile
      throw err;
    }
  }

  /** Deletes the rules matching every given criterion; returns how many. */
  async deleteRules(caller: Caller, customerId: number, match: { id?: number; packageId?: string }): Promise<number> {
    if (match.id === undefined && match.packageId === undefined) throw new AppError('VALIDATION_ERROR', 'give id or package_id');
    await this.customer(caller, customerId);
    return this.db.transaction().execute(async (trx) => {
      const deleted = await repo.deleteRules(trx, customerId, match);
      if (deleted > 0) await repo.recordListChange(trx, customerId, this.clock.now());
      return deleted;
    });
  }

  /** The software of the customer's Windows agents, per program with the agent count of each version. */
  async inventory(caller: Caller, customerId: number, page: PageRequest): Promise<Page<InventoryProduct>> {
    await this.customer(caller, customerId);
    const products: InventoryProduct[] = [];
    const counts = await inventory.aggregateInventory(this.db, customerId, page);
    // Rows come ordered by program, each program's total (version null) before its versions.
    for (const row of counts.items) {
      if (row.version === null) {
        products.push({ name: row.name, publisher: row.publisher, agent_count: row.agent_count, versions: [] });
      } else {
        products.at(-1)?.versions.push({ version: row.version, agent_count: row.agent_count });
      }
    }
    // Newest version first, numeric-aware (10.0 after 9.1).
    for (const p of products) p.versions.sort((a, b) => compareVersions(b.version, a.version));
    return { items: products, next: counts.next };
  }

  /**
   * The package ids of one action as winget-autoupdate's list file, with its validators; `body` is null
   * when the request's conditions show the caller's copy is current. Asked for within the second of the
   * latest change, the answer waits until that second is over (list-validators.ts), and reads again.
   */
  async packageList(caller: Caller, customerId: number, action: WauAction, conditions: ListConditions = {}): Promise<PackageList> {
    const customer = await this.customer(caller, customerId);
    for (let holds = 0; ; holds++) {
      const list = await this.db.transaction().execute(async (trx) => {
        // The change time first, locked: the list read after it holds every change recorded before it.
        const changedAt = (await repo.lockListChange(trx, customerId)) ?? customer.created_at;
        return { changedAt, body: formatPackageList(await repo.listPackageIds(trx, customerId, action)) };
      });
      const now = this.clock.now();
      // Changes every second would hold the answer for good: after a few, Last-Modified is capped at Date.
      const wait = holds < MAX_HOLDS ? holdMs(list.changedAt, now) : 0;
      if (wait === 0) {
        const validators = listValidators(list.body, list.changedAt, now);
        return { ...validators, body: isNotModified(validators, conditions) ? null : list.body };
      }
      await this.clock.sleep(wait);
    }
  }

  private async customer(caller: Caller, customerId: number): Promise<customers.CustomerRow> {
    const customer = await customers.findCustomer(this.db, customerId);
    if (!customer) throw new AppError('NOT_FOUND', 'Customer not found');
    assertInScope(caller, customer.id, 'Customer');
    return customer;
  }
}

/** winget-autoupdate's list file: one id per line, byte order, no duplicates, final newline; "" when empty. */
export function formatPackageList(ids: readonly string[]): string {
  const unique = [...new Set(ids)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return unique.map((id) => `${id}\n`).join('');
}
