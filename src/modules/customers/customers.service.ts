// Customers: the MSP's clients that agents and scoped API keys belong to (contract §3).
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/db-errors.js';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import { assertInScope, scopeOf, type Caller } from '../auth/caller.js';
import * as repo from './customers.repo.js';

export type Customer = repo.CustomerRow;

export class CustomerService {
  constructor(
    private readonly db: Kysely<Database>,
    /** Called after a delete took the customer's API keys with it (key caches must forget them). */
    private readonly onKeysDeleted: () => void = () => undefined,
  ) {}

  list(caller: Caller, page: PageRequest): Promise<Page<Customer>> {
    return repo.listCustomers(this.db, scopeOf(caller), page);
  }

  /** The customer, or 404 when it does not exist or lies outside the caller's scope. */
  async get(caller: Caller, id: number): Promise<Customer> {
    const customer = await repo.findCustomer(this.db, id);
    if (!customer) throw new AppError('NOT_FOUND', 'Customer not found');
    assertInScope(caller, customer.id, 'Customer');
    return customer;
  }

  async create(caller: Caller, input: { number: string; name: string }): Promise<Customer> {
    if (scopeOf(caller) !== null) throw new AppError('FORBIDDEN', 'A customer-scoped API key cannot create customers');
    return this.uniqueNumber(input.number, () => repo.insertCustomer(this.db, input));
  }

  async update(caller: Caller, id: number, input: { number?: string; name?: string }): Promise<Customer> {
    await this.get(caller, id);
    const updated = await this.uniqueNumber(input.number, () => repo.updateCustomer(this.db, id, input));
    if (!updated) throw new AppError('NOT_FOUND', 'Customer not found');
    return updated;
  }

  async delete(caller: Caller, id: number): Promise<void> {
    await this.get(caller, id);
    await repo.deleteCustomer(this.db, id);
    this.onKeysDeleted();
  }

  private async uniqueNumber<T>(number: string | undefined, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (isUniqueViolation(err)) throw new AppError('CONFLICT', `Customer number ${number} already exists`);
      throw err;
    }
  }
}
